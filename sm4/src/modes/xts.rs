//! SM4-XTS, IEEE Std 1619 and GB/T 17964-2021, with ciphertext stealing,
//! one sector or many consecutive sectors per call.

use super::common::{Blk, xor};
use crate::backends::{Backend, with_kernel};
use crate::kernel::{Gb, Ieee, Kernel, KernelClosure, STAGE, Stage, TweakOrder, reach};
use crate::{Error, Sm4};
use cipher::InOutBuf;
use cipher::KeyInit;
use core::fmt;

/// Which XTS: the two standards differ only in how the tweak is multiplied
/// by `x` from one block to the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum XtsStandard {
    /// IEEE Std 1619 (Linux `xts(sm4)`, libgcrypt, the `xts-mode` crate):
    /// the tweak as a little-endian 128-bit number, shifted left, `0x87`
    /// folded into the first byte.
    Ieee1619,
    /// GB/T 17964-2021 (OpenSSL's default for SM4-XTS, `xts_standard`
    /// "GB"): the tweak in GHASH's bit order, shifted right, `0xE1` folded
    /// into the first byte.
    GbT17964,
}

/// SM4-XTS (key = data key || tweak key, 32 bytes), with ciphertext
/// stealing for sectors of any length from 16 bytes.
///
/// [`encrypt_sector`](Self::encrypt_sector) takes one sector and its
/// 16-byte tweak; its first step, encrypting the tweak, is one block's
/// latency. [`encrypt_sectors`](Self::encrypt_sectors) takes many
/// consecutive sectors numbered from `first_sector` (dm-crypt's `plain64`
/// tweaks: the sector number as 16 little-endian bytes), encrypts the
/// tweaks of up to 64 sectors at once and runs the data blocks of
/// consecutive sectors together through the widest kernel, so that
/// 512-byte sectors fill the pipeline like one long message.
///
/// ```
/// use sm4_simd::{Sm4Xts, XtsStandard};
///
/// let mut key = [0u8; 32];
/// key[16..].fill(1); // the halves must differ
/// let xts = Sm4Xts::new(&key, XtsStandard::Ieee1619).unwrap();
/// let mut disk = vec![0x5au8; 8 * 512];
/// xts.encrypt_sectors(1000, 512, &mut disk).unwrap();
/// // One sector alone gives the same ciphertext.
/// let mut sector = vec![0x5au8; 512];
/// xts.encrypt_sector(&1003u128.to_le_bytes(), &mut sector).unwrap();
/// assert_eq!(&disk[3 * 512..4 * 512], &sector[..]);
/// xts.decrypt_sectors(1000, 512, &mut disk).unwrap();
/// assert!(disk.iter().all(|&b| b == 0x5a));
/// ```
#[derive(Clone)]
pub struct Sm4Xts {
    data: Sm4,
    tweak: Sm4,
    standard: XtsStandard,
}

impl Sm4Xts {
    /// The data key is the first 16 bytes of `key`, the tweak key the last
    /// 16.
    ///
    /// # Errors
    /// [`Error::EqualKeyHalves`] if the two halves are equal.
    pub fn new(key: &[u8; 32], standard: XtsStandard) -> Result<Self, Error> {
        Self::with(key, standard, |k| Sm4::new(k.into()))
    }

    /// Test hook: a key with a given backend, or `None` if the CPU lacks it.
    #[doc(hidden)]
    pub fn with_backend(
        key: &[u8; 32],
        standard: XtsStandard,
        backend: Backend,
    ) -> Option<Result<Self, Error>> {
        backend.is_available().then(|| {
            Self::with(key, standard, |k| {
                Sm4::with_backend(k, backend).expect("available")
            })
        })
    }

    fn with(
        key: &[u8; 32],
        standard: XtsStandard,
        cipher: impl Fn(&[u8; 16]) -> Sm4,
    ) -> Result<Self, Error> {
        let (k1, k2) = key.split_at(16);
        // Declassified: whether the key halves are equal (the refusal says
        // it anyway); every byte is compared, only that answer comes out.
        if crate::ct::equal_declassified(k1, k2) {
            return Err(Error::EqualKeyHalves);
        }
        let half = |h: &[u8]| cipher(h.try_into().expect("16 bytes"));
        Ok(Sm4Xts {
            data: half(k1),
            tweak: half(k2),
            standard,
        })
    }

    /// The standard this instance follows.
    pub fn standard(&self) -> XtsStandard {
        self.standard
    }

    /// Encrypt one sector of at least 16 bytes in place, with its tweak.
    ///
    /// # Errors
    /// [`Error::TooShort`] below 16 bytes (the buffer is left unchanged).
    pub fn encrypt_sector(&self, tweak: &[u8; 16], buf: &mut [u8]) -> Result<(), Error> {
        self.sector(tweak, buf, false)
    }

    /// Decrypt one sector of at least 16 bytes in place, with its tweak.
    ///
    /// # Errors
    /// [`Error::TooShort`] below 16 bytes (the buffer is left unchanged).
    pub fn decrypt_sector(&self, tweak: &[u8; 16], buf: &mut [u8]) -> Result<(), Error> {
        self.sector(tweak, buf, true)
    }

    /// Encrypt consecutive sectors of `sector_size` bytes in place, the
    /// first numbered `first_sector`; the tweak of sector `s` is `s` as 16
    /// little-endian bytes (dm-crypt `plain64`).
    ///
    /// # Errors
    /// [`Error::NotBlockMultiple`] if `sector_size` is not a nonzero
    /// multiple of 16; [`Error::NotSectorMultiple`] if `buf` is not a whole
    /// number of sectors; [`Error::SectorOverflow`] if the last sector
    /// number would pass `u128::MAX`. The buffer is then left unchanged.
    pub fn encrypt_sectors(
        &self,
        first_sector: u128,
        sector_size: usize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        self.sectors(first_sector, sector_size, buf, false)
    }

    /// Decrypt consecutive sectors in place; see
    /// [`encrypt_sectors`](Self::encrypt_sectors).
    ///
    /// # Errors
    /// As [`encrypt_sectors`](Self::encrypt_sectors).
    pub fn decrypt_sectors(
        &self,
        first_sector: u128,
        sector_size: usize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        self.sectors(first_sector, sector_size, buf, true)
    }

    fn schedules(&self, decrypt: bool) -> (&[u32; 32], &[u32; 32]) {
        let data = if decrypt {
            &self.data.dec
        } else {
            &self.data.enc
        };
        (data, &self.tweak.enc)
    }

    fn sector(&self, tweak: &[u8; 16], buf: &mut [u8], decrypt: bool) -> Result<(), Error> {
        if buf.len() < 16 {
            return Err(Error::TooShort);
        }
        let (rk, tweak_rk) = self.schedules(decrypt);
        let job = Sector {
            rk,
            tweak_rk,
            tweak,
            buf,
            decrypt,
        };
        match self.standard {
            XtsStandard::Ieee1619 => with_kernel(self.data.backend, Job::<_, Ieee>::new(job)),
            XtsStandard::GbT17964 => with_kernel(self.data.backend, Job::<_, Gb>::new(job)),
        }
        Ok(())
    }

    fn sectors(
        &self,
        first: u128,
        sector_size: usize,
        buf: &mut [u8],
        decrypt: bool,
    ) -> Result<(), Error> {
        if sector_size == 0 || !sector_size.is_multiple_of(16) {
            return Err(Error::NotBlockMultiple);
        }
        if !buf.len().is_multiple_of(sector_size) {
            return Err(Error::NotSectorMultiple);
        }
        let count = buf.len() / sector_size;
        if count > 0 && first.checked_add(count as u128 - 1).is_none() {
            return Err(Error::SectorOverflow);
        }
        let (rk, tweak_rk) = self.schedules(decrypt);
        let job = Sectors {
            rk,
            tweak_rk,
            first,
            sector_blocks: sector_size / 16,
            buf,
        };
        match self.standard {
            XtsStandard::Ieee1619 => with_kernel(self.data.backend, Job::<_, Ieee>::new(job)),
            XtsStandard::GbT17964 => with_kernel(self.data.backend, Job::<_, Gb>::new(job)),
        }
        Ok(())
    }
}

/// A one-block XTS step: `E(b ^ t) ^ t`.
#[inline(always)]
fn xts_block<K: Kernel>(k: K, rk: &[u32; 32], b: &Blk, t: &Blk) -> Blk {
    let mut x = xor(b, t);
    k.crypt_block(rk, &mut x);
    xor(&x, t)
}

/// XTS over `blocks` in stages. The blocks form runs, each with tweaks
/// `t, t·x, t·x^2, ...`: `next_run(j, t)` gives the first tweak and the
/// length (at least 1) of the run that starts at block `j`, `t` being the
/// tweak that would follow the run before. Returns the tweak that follows
/// the last run.
#[inline(always)]
fn xts_blocks<K: Kernel, O: TweakOrder>(
    k: K,
    rk: &[u32; 32],
    blocks: &mut [Blk],
    mut next_run: impl FnMut(usize, u128) -> (u128, usize),
) -> u128 {
    if let [b] = blocks {
        // One block: the latency path, no stage.
        let (t, _) = next_run(0, 0);
        *b = xts_block(k, rk, b, &O::store(t));
        return O::mul_x(t);
    }
    if K::XTS_RUNS {
        // The kernel's own path, run by run.
        let (mut j, mut t) = (0, 0u128);
        while j < blocks.len() {
            let (first, len) = next_run(j, t);
            t = k.xts_run::<O>(rk, first, &mut blocks[j..j + len]);
            j += len;
        }
        return t;
    }
    let mut stage = Stage::new();
    let mut tweaks = Stage::new();
    // What the stages below are written up to (to wipe).
    let used = reach(blocks.len(), STAGE);
    let (mut t, mut left) = (0u128, 0usize);
    for (c, chunk) in blocks.chunks_mut(STAGE).enumerate() {
        let n = chunk.len();
        // A kernel that whitens in its own loads and stores needs only the
        // tweaks.
        let tweaks_only = K::XTS_FOLDS && n == STAGE;
        let mut j = 0;
        while j < n {
            if left == 0 {
                (t, left) = next_run(STAGE * c + j, t);
            }
            let len = core::cmp::min(left, n - j);
            let run = j..j + len;
            let whitened: &mut [Blk] = if tweaks_only {
                &mut []
            } else {
                &mut stage.0[run.clone()]
            };
            k.xts_whiten::<O>(t, &chunk[run.clone()], whitened, &mut tweaks.0[run]);
            t = O::mul_x(O::load(&tweaks.0[j + len - 1]));
            left -= len;
            j += len;
        }
        if k.crypt_stage_xts(rk, &tweaks, chunk) {
            // The whitening folded into the kernel's loads and stores.
            continue;
        }
        debug_assert!(!tweaks_only, "XTS_FOLDS without crypt_stage_xts");
        k.crypt_stage(rk, &mut stage.0, n);
        let out = InOutBuf::new(&stage.0[..n], chunk).expect("equal lengths");
        k.xor_into(out, &tweaks.0[..n]);
    }
    stage.wipe(used);
    tweaks.wipe(used);
    t
}

/// One sector.
struct Sector<'a> {
    rk: &'a [u32; 32],
    tweak_rk: &'a [u32; 32],
    tweak: &'a [u8; 16],
    buf: &'a mut [u8],
    decrypt: bool,
}

/// Consecutive sectors.
struct Sectors<'a> {
    rk: &'a [u32; 32],
    tweak_rk: &'a [u32; 32],
    first: u128,
    sector_blocks: usize,
    buf: &'a mut [u8],
}

/// A job for one standard.
struct Job<J, O>(J, core::marker::PhantomData<O>);

impl<J, O> Job<J, O> {
    fn new(job: J) -> Self {
        Job(job, core::marker::PhantomData)
    }
}

impl<O: TweakOrder> KernelClosure for Job<Sector<'_>, O> {
    type Output = ();

    #[inline(always)]
    fn call<K: Kernel>(self, k: K) {
        let Sector {
            rk,
            tweak_rk,
            tweak,
            buf,
            decrypt,
        } = self.0;
        let mut t0 = Blk::from(*tweak);
        k.crypt_block(tweak_rk, &mut t0);
        let t0 = O::load(&t0);
        let (blocks, tail) = Blk::slice_as_chunks_mut(buf);
        let m = blocks.len();
        let r = tail.len();
        if r == 0 {
            xts_blocks::<K, O>(k, rk, blocks, |_, _| (t0, m));
            return;
        }
        // Ciphertext stealing: the last whole block and the partial one
        // trade places. Encryption runs the whole blocks as usual (the last
        // one's output, CC, gives the partial ciphertext its head and the
        // last plaintext its tail) and then that block with the next tweak;
        // decryption takes the next tweak for the last whole block, in the
        // same stage, and the tweak it skipped for the rebuilt CC.
        let mut skipped = 0u128;
        let next = xts_blocks::<K, O>(k, rk, blocks, |j, t| {
            if !decrypt {
                (t0, m)
            } else if j == 0 && m > 1 {
                (t0, m - 1)
            } else {
                skipped = if m > 1 { t } else { t0 };
                (O::mul_x(skipped), 1)
            }
        });
        let head = blocks[m - 1];
        let mut last = head;
        last[..r].copy_from_slice(tail);
        tail.copy_from_slice(&head[..r]);
        let final_tweak = if decrypt { skipped } else { next };
        blocks[m - 1] = xts_block(k, rk, &last, &O::store(final_tweak));
    }
}

impl<O: TweakOrder> KernelClosure for Job<Sectors<'_>, O> {
    type Output = ();

    #[inline(always)]
    fn call<K: Kernel>(self, k: K) {
        let Sectors {
            rk,
            tweak_rk,
            first,
            sector_blocks,
            buf,
        } = self.0;
        let (blocks, _) = Blk::slice_as_chunks_mut(buf);
        let count = blocks.len() / sector_blocks;
        // The sectors' first tweaks, up to a stage of them at a time.
        let mut firsts = Stage::new();
        let (mut ready, mut taken) = (0usize, 0usize);
        xts_blocks::<K, O>(k, rk, blocks, |j, _| {
            if taken == ready {
                let started = j / sector_blocks;
                ready = core::cmp::min(STAGE, count - started);
                for (i, b) in firsts.0[..ready].iter_mut().enumerate() {
                    *b = (first + (started + i) as u128).to_le_bytes().into();
                }
                k.crypt_stage(tweak_rk, &mut firsts.0, ready);
                taken = 0;
            }
            taken += 1;
            (O::load(&firsts.0[taken - 1]), sector_blocks)
        });
        firsts.wipe(reach(count, STAGE));
    }
}

impl fmt::Debug for Sm4Xts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sm4Xts")
            .field("standard", &self.standard)
            .field("backend", &self.data.backend.name())
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "zeroize")]
impl zeroize::ZeroizeOnDrop for Sm4Xts {}

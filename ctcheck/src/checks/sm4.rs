//! SM4: key schedule and block cipher, every mode type, both AEADs with a
//! right and a wrong tag, and GHASH alone, on each backend and GHASH engine.

use aead::AeadInOut;
use cipher::{
    Block, BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, InnerIvInit,
    StreamCipher, StreamCipherSeek,
};
use sm4_simd::{
    Backend, GhashEngine, GhashHook, Sm4, Sm4CbcDec, Sm4CbcEnc, Sm4Ccm, Sm4CfbDec, Sm4CfbEnc,
    Sm4Ctr, Sm4Gcm, Sm4Xts, XtsStandard,
};

use super::{LENGTHS, Tally, public, secret, secret_array, secret_vec};

/// Not run: valgrind cannot execute GFNI, AVX-512, VAES or VPCLMULQDQ.
pub(super) const SKIPPED: [Backend; 3] = [Backend::Gfni, Backend::Gfni256, Backend::Vaes];
pub(super) const SKIPPED_GHASH: [GhashEngine; 2] = [GhashEngine::Vpclmul, GhashEngine::Vpclmul256];

pub(super) fn check(tally: &mut Tally) {
    for b in Backend::available().filter(|b| !SKIPPED.contains(b)) {
        let name = b.name();
        block_cipher(b);
        tally.ran("sm4", name, "key schedule, block encrypt/decrypt");
        ctr(b);
        tally.ran("sm4", name, "Sm4Ctr");
        cbc(b);
        tally.ran("sm4", name, "Sm4CbcEnc/Dec, CS3");
        cfb(b);
        tally.ran("sm4", name, "Sm4CfbEnc/Dec, messages and blocks");
        for standard in [XtsStandard::Ieee1619, XtsStandard::GbT17964] {
            xts(b, standard);
        }
        tally.ran("sm4", name, "Sm4Xts sector(s), both standards");
        xts_equal_halves(b);
        tally.ran("sm4", name, "Sm4Xts equal-halves refusal");
        ccm(b);
        tally.ran("sm4", name, "Sm4Ccm seal/open/wrong tag");
        for engine in b.ghash_engines().filter(|e| !SKIPPED_GHASH.contains(e)) {
            let pair = format!("{name}+{}", engine.name());
            gcm(b, engine);
            tally.ran("sm4-gcm", &pair, "Sm4Gcm seal/open/wrong tag");
            ghash(b, engine);
            tally.ran("sm4-gcm", &pair, "GHASH");
        }
    }
}

/// A secret 16-byte key and its schedule on backend `b`.
fn cipher(b: Backend) -> Sm4 {
    Sm4::with_backend(&secret_array::<16>(0x11), b).expect("available")
}

/// `bytes` as secret blocks (a multiple of 16 bytes).
fn blocks(bytes: &[u8]) -> Vec<Block<Sm4>> {
    let mut blocks: Vec<Block<Sm4>> = bytes
        .chunks_exact(16)
        .map(|c| Block::<Sm4>::try_from(c).expect("16 bytes"))
        .collect();
    for blk in &mut blocks {
        secret(blk);
    }
    blocks
}

fn public_blocks(blocks: &mut [Block<Sm4>]) {
    for blk in blocks {
        public(blk);
    }
}

fn block_cipher(b: Backend) {
    let sm4 = cipher(b);
    let mut one = Block::<Sm4>::from(secret_array::<16>(1));
    sm4.encrypt_block(&mut one);
    public(&mut one);
    secret(&mut one);
    sm4.decrypt_block(&mut one);
    public(&mut one);
    // 1 to 64 + 3 blocks: every kernel width and the leftovers.
    for n in [1, 3, 8, 17, 67] {
        let mut many = blocks(&secret_vec(16 * n, 2));
        sm4.encrypt_blocks(&mut many);
        public_blocks(&mut many);
        let mut many = blocks(&secret_vec(16 * n, 3));
        sm4.decrypt_blocks(&mut many);
        public_blocks(&mut many);
    }
}

fn ctr(b: Backend) {
    for len in LENGTHS {
        let iv = secret_array::<16>(4).into();
        let mut ctr = Sm4Ctr::inner_iv_init(cipher(b), &iv);
        let mut buf = secret_vec(len, 5);
        ctr.apply_keystream(&mut buf);
        public(&mut buf);
        // A second call from the middle of a block.
        ctr.seek(len as u64 + 7);
        secret(&mut buf);
        ctr.apply_keystream(&mut buf);
        public(&mut buf);
    }
}

fn cbc(b: Backend) {
    for len in LENGTHS {
        let whole = len - len % 16;
        let iv = secret_array::<16>(6).into();
        let mut buf = blocks(&secret_vec(whole, 7));
        Sm4CbcEnc::inner_iv_init(cipher(b), &iv).encrypt_blocks(&mut buf);
        public_blocks(&mut buf);
        let mut buf = blocks(&secret_vec(whole, 8));
        Sm4CbcDec::inner_iv_init(cipher(b), &iv).decrypt_blocks(&mut buf);
        public_blocks(&mut buf);
        if len >= 16 {
            let mut buf = secret_vec(len, 9);
            let enc = Sm4CbcEnc::inner_iv_init(cipher(b), &iv);
            enc.encrypt_cs3(&mut buf).expect("at least one block");
            public(&mut buf);
            secret(&mut buf);
            let dec = Sm4CbcDec::inner_iv_init(cipher(b), &iv);
            dec.decrypt_cs3(&mut buf).expect("at least one block");
            public(&mut buf);
        }
    }
}

fn cfb(b: Backend) {
    for len in LENGTHS {
        let iv = secret_array::<16>(10).into();
        let mut buf = secret_vec(len, 11);
        Sm4CfbEnc::inner_iv_init(cipher(b), &iv).encrypt(&mut buf);
        public(&mut buf);
        secret(&mut buf);
        Sm4CfbDec::inner_iv_init(cipher(b), &iv).decrypt(&mut buf);
        public(&mut buf);
        // Whole blocks through `BlockModeEncrypt` / `BlockModeDecrypt`.
        let whole = len - len % 16;
        let mut buf = blocks(&secret_vec(whole, 22));
        Sm4CfbEnc::inner_iv_init(cipher(b), &iv).encrypt_blocks(&mut buf);
        public_blocks(&mut buf);
        let mut buf = blocks(&secret_vec(whole, 23));
        Sm4CfbDec::inner_iv_init(cipher(b), &iv).decrypt_blocks(&mut buf);
        public_blocks(&mut buf);
    }
}

fn xts(b: Backend, standard: XtsStandard) {
    let key = secret_array::<32>(12);
    let xts = Sm4Xts::with_backend(&key, standard, b)
        .expect("available")
        .expect("the halves differ");
    for len in LENGTHS.into_iter().filter(|&l| l >= 16) {
        let tweak = secret_array::<16>(13);
        let mut buf = secret_vec(len, 14);
        xts.encrypt_sector(&tweak, &mut buf).expect("long enough");
        public(&mut buf);
        secret(&mut buf);
        xts.decrypt_sector(&tweak, &mut buf).expect("long enough");
        public(&mut buf);
    }
    // Sector numbers are public (they are positions on a disk).
    for (sector_size, sectors) in [(16, 5), (512, 3)] {
        let mut buf = secret_vec(sector_size * sectors, 15);
        xts.encrypt_sectors(1000, sector_size, &mut buf)
            .expect("whole sectors");
        public(&mut buf);
        secret(&mut buf);
        xts.decrypt_sectors(1000, sector_size, &mut buf)
            .expect("whole sectors");
        public(&mut buf);
    }
}

/// A key whose halves are equal is refused: the answer is the one bit the
/// library declassifies (see `sm4_simd`'s `ct` module); the comparison
/// itself must not branch on the key.
fn xts_equal_halves(b: Backend) {
    let mut key = [0x5au8; 32];
    secret(&mut key);
    let refused = Sm4Xts::with_backend(&key, XtsStandard::Ieee1619, b).expect("available");
    assert!(refused.is_err(), "equal halves must be refused");
    // Differing in the last byte only: accepted.
    key[31] ^= 1;
    secret(&mut key);
    let accepted = Sm4Xts::with_backend(&key, XtsStandard::Ieee1619, b).expect("available");
    assert!(accepted.is_ok(), "different halves must be accepted");
}

/// Seal, open with the right tag, open with a wrong tag (refused, the
/// output zeroed): the AEAD `aead` on each length.
fn aead_round<A: AeadInOut>(aead: &A, nonce_len: usize) {
    for len in LENGTHS {
        let nonce = aead::Nonce::<A>::try_from(&secret_vec(nonce_len, 16)[..]).expect("nonce");
        let aad = secret_vec(len % 23, 17);
        let mut buf = secret_vec(len, 18);
        let mut tag = aead
            .encrypt_inout_detached(&nonce, &aad, (&mut buf[..]).into())
            .expect("within the limits");
        public(&mut tag);
        public(&mut buf);
        secret(&mut buf);
        // Declassified in the library: whether the tag matched.
        let opened = aead.decrypt_inout_detached(&nonce, &aad, (&mut buf[..]).into(), &tag);
        assert!(opened.is_ok(), "the right tag must open");
        public(&mut buf);
        let mut wrong = tag.clone();
        let flip = len % wrong.len();
        wrong[flip] ^= 1;
        secret(&mut buf);
        let refused = aead.decrypt_inout_detached(&nonce, &aad, (&mut buf[..]).into(), &wrong);
        assert!(refused.is_err(), "a wrong tag must be refused");
        public(&mut buf);
    }
}

fn ccm(b: Backend) {
    aead_round(&Sm4Ccm::from(cipher(b)), 12);
}

fn gcm(b: Backend, engine: GhashEngine) {
    let gcm = Sm4Gcm::with_backend(&secret_array::<16>(0x11), b, engine).expect("a runner");
    aead_round(&gcm, 12);
}

fn ghash(b: Backend, engine: GhashEngine) {
    let hook = GhashHook::new(&secret_array::<16>(19), b, engine).expect("a runner");
    for len in LENGTHS {
        let mut state = secret_array::<16>(20);
        hook.update_padded(&mut state, &secret_vec(len, 21));
        public(&mut state);
    }
}

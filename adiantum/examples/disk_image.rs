//! Encrypt or decrypt a disk image in place, sector by sector, the way
//! dm-crypt does with `--cipher xchacha12,aes-adiantum-plain64`.
//!
//! ```text
//! disk_image encrypt IMAGE --key HEX64 [--xchacha20] [--iv-512] [--verify]
//! disk_image decrypt IMAGE --key HEX64 [--xchacha20] [--iv-512] [--verify]
//! disk_image selftest [IMAGE]
//! ```
//!
//! - Sectors are 4096 bytes. A last partial sector (at least 16 bytes) is
//!   encrypted as a shorter Adiantum message; a tail under 16 bytes is an
//!   error (Adiantum's minimum message).
//! - The tweak is dm-crypt's `plain64` IV for Adiantum: the sector number
//!   as a 64-bit little-endian integer, zero-padded to the cipher's IV size
//!   of 32 bytes. By default the sector number counts 4096-byte sectors
//!   (dm-crypt's `iv_large_sectors`, `cryptsetup open --type plain
//!   --sector-size 4096 --iv-large-sectors`); with `--iv-512` it counts
//!   512-byte units (sector index × 8), as dm-crypt does without that flag,
//!   e.g. for LUKS2 with 4096-byte sectors.
//! - `--verify`: every sector is decrypted again in memory and compared
//!   before it is written, and after the pass the file is read back and
//!   compared with what was written.
//! - `selftest`: fills IMAGE (default: a temporary file) with 1 MiB of
//!   pseudo-random data, encrypts it, decrypts it and checks the round trip.
//!
//! A real tool would take the key from a key file or a KDF, not the command
//! line (visible to other users in the process list).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::process::ExitCode;
use std::time::Instant;

use adiantum_simd::{AdiantumXChaCha12Aes, AdiantumXChaCha20Aes};

const SECTOR: usize = 4096;

#[derive(Clone, Copy, PartialEq)]
enum Dir {
    Encrypt,
    Decrypt,
}

/// One of the two aliases, chosen at run time.
enum Cipher {
    X12(Box<AdiantumXChaCha12Aes>),
    X20(Box<AdiantumXChaCha20Aes>),
}

impl Cipher {
    fn apply(&self, dir: Dir, tweak: &[u8], buf: &mut [u8]) -> Result<(), adiantum_simd::Error> {
        match (self, dir) {
            (Cipher::X12(c), Dir::Encrypt) => c.encrypt_in_place(tweak, buf),
            (Cipher::X12(c), Dir::Decrypt) => c.decrypt_in_place(tweak, buf),
            (Cipher::X20(c), Dir::Encrypt) => c.encrypt_in_place(tweak, buf),
            (Cipher::X20(c), Dir::Decrypt) => c.decrypt_in_place(tweak, buf),
        }
    }
}

/// dm-crypt `plain64`: the sector number, 64-bit little endian, zero-padded
/// to the 32-byte IV.
fn plain64(sector: u64) -> [u8; 32] {
    let mut iv = [0u8; 32];
    iv[..8].copy_from_slice(&sector.to_le_bytes());
    iv
}

fn parse_key(hex: &str) -> Result<[u8; 32], String> {
    let hex = hex.trim();
    if hex.len() != 64 {
        return Err(format!("--key needs 64 hex digits, got {}", hex.len()));
    }
    let mut key = [0u8; 32];
    for (i, b) in key.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16)
            .map_err(|_| format!("--key: bad hex at digit {}", 2 * i))?;
    }
    Ok(key)
}

/// A text progress bar on stderr, redrawn at most every 1/8 s.
struct Progress {
    total: u64,
    start: Instant,
    last: Option<Instant>,
    label: &'static str,
}

impl Progress {
    fn new(label: &'static str, total: u64) -> Self {
        Progress {
            total,
            start: Instant::now(),
            last: None,
            label,
        }
    }

    fn update(&mut self, done: u64) {
        let now = Instant::now();
        if done < self.total
            && self
                .last
                .is_some_and(|t| now.duration_since(t).as_millis() < 125)
        {
            return;
        }
        self.last = Some(now);
        const WIDTH: u64 = 40;
        let frac = if self.total == 0 {
            1.0
        } else {
            done as f64 / self.total as f64
        };
        let filled = (frac * WIDTH as f64) as u64;
        let secs = now.duration_since(self.start).as_secs_f64().max(1e-9);
        let bar: String = (0..WIDTH)
            .map(|i| if i < filled { '#' } else { '.' })
            .collect();
        eprint!(
            "\r{:<8} [{bar}] {:5.1}% {:.1}/{:.1} MiB {:7.1} MB/s",
            self.label,
            frac * 100.0,
            done as f64 / 1048576.0,
            self.total as f64 / 1048576.0,
            done as f64 / secs / 1e6
        );
        if done >= self.total {
            eprintln!();
        }
    }
}

/// FNV-1a, to compare a read-back sector with what was written without
/// keeping a copy of the image.
fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn process(
    path: &str,
    cipher: &Cipher,
    dir: Dir,
    iv_512: bool,
    verify: bool,
) -> Result<(), String> {
    let io = |e: std::io::Error| format!("{path}: {e}");
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let tail = (len % SECTOR as u64) as usize;
    if tail != 0 && tail < adiantum_simd::BLOCK_SIZE {
        return Err(format!(
            "{path}: {len} bytes leave a last sector of {tail} bytes; Adiantum needs at least 16"
        ));
    }
    let label = match dir {
        Dir::Encrypt => "encrypt",
        Dir::Decrypt => "decrypt",
    };
    let back = match dir {
        Dir::Encrypt => Dir::Decrypt,
        Dir::Decrypt => Dir::Encrypt,
    };
    let mut progress = Progress::new(label, len);
    let mut sums = Vec::new();
    let mut buf = vec![0u8; SECTOR];
    let mut check = vec![0u8; SECTOR];
    let mut pos = 0u64;
    while pos < len {
        let n = (len - pos).min(SECTOR as u64) as usize;
        let sector = pos / SECTOR as u64;
        let tweak = plain64(if iv_512 { sector * 8 } else { sector });
        let data = &mut buf[..n];
        file.seek(SeekFrom::Start(pos)).map_err(io)?;
        file.read_exact(data).map_err(io)?;
        if verify {
            check[..n].copy_from_slice(data);
        }
        cipher
            .apply(dir, &tweak, data)
            .map_err(|e| format!("sector {sector}: {e}"))?;
        if verify {
            let mut again = data.to_vec();
            cipher
                .apply(back, &tweak, &mut again)
                .map_err(|e| format!("sector {sector}: {e}"))?;
            if again != check[..n] {
                return Err(format!("sector {sector}: round trip failed, not written"));
            }
            sums.push(fnv(data));
        }
        file.seek(SeekFrom::Start(pos)).map_err(io)?;
        file.write_all(data).map_err(io)?;
        pos += n as u64;
        progress.update(pos);
    }
    file.sync_all().map_err(io)?;
    if verify {
        let mut progress = Progress::new("verify", len);
        let mut f = File::open(path).map_err(io)?;
        let mut pos = 0u64;
        for (sector, want) in sums.iter().enumerate() {
            let n = (len - pos).min(SECTOR as u64) as usize;
            f.read_exact(&mut buf[..n]).map_err(io)?;
            if fnv(&buf[..n]) != *want {
                return Err(format!(
                    "sector {sector}: read back differs from what was written"
                ));
            }
            pos += n as u64;
            progress.update(pos);
        }
        eprintln!("verified {} sectors", sums.len());
    }
    Ok(())
}

fn selftest(path: Option<&str>) -> Result<(), String> {
    let tmp;
    let path = match path {
        Some(p) => p,
        None => {
            tmp =
                std::env::temp_dir().join(format!("adiantum-selftest-{}.img", std::process::id()));
            tmp.to_str().ok_or("temporary path is not UTF-8")?
        }
    };
    // 1 MiB plus a partial sector, from a small xorshift generator.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let image: Vec<u8> = (0..(1 << 20) + 1000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(path, &image).map_err(|e| format!("{path}: {e}"))?;
    let cipher = Cipher::X12(Box::new(AdiantumXChaCha12Aes::new(&[0x42; 32])));
    process(path, &cipher, Dir::Encrypt, false, true)?;
    let enc = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    if enc[..SECTOR] == image[..SECTOR] {
        return Err("encryption left the first sector unchanged".into());
    }
    process(path, &cipher, Dir::Decrypt, false, true)?;
    let dec = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let _ = std::fs::remove_file(path);
    if dec != image {
        return Err("decrypt(encrypt(image)) != image".into());
    }
    eprintln!("selftest passed ({} bytes)", image.len());
    Ok(())
}

fn usage() -> String {
    "usage: disk_image (encrypt|decrypt) IMAGE --key HEX64 [--xchacha20] [--iv-512] [--verify]\n       \
     disk_image selftest [IMAGE]"
        .into()
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cmd = args.first().ok_or_else(usage)?;
    if cmd == "selftest" {
        return selftest(args.get(1).map(String::as_str));
    }
    let dir = match cmd.as_str() {
        "encrypt" => Dir::Encrypt,
        "decrypt" => Dir::Decrypt,
        _ => return Err(usage()),
    };
    let (mut path, mut key) = (None, None);
    let (mut x20, mut iv_512, mut verify) = (false, false, false);
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--key" => key = Some(parse_key(it.next().ok_or("--key needs a value")?)?),
            "--xchacha20" => x20 = true,
            "--verify" => verify = true,
            "--iv-512" => iv_512 = true,
            s if !s.starts_with("--") && path.is_none() => path = Some(s.to_string()),
            _ => return Err(usage()),
        }
    }
    let path = path.ok_or_else(usage)?;
    let key = key.ok_or("--key is required")?;
    let cipher = if x20 {
        Cipher::X20(Box::new(AdiantumXChaCha20Aes::new(&key)))
    } else {
        Cipher::X12(Box::new(AdiantumXChaCha12Aes::new(&key)))
    };
    process(&path, &cipher, dir, iv_512, verify)
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("disk_image: {e}");
            ExitCode::FAILURE
        }
    }
}

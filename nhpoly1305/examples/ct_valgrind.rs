//! Constant-time check under valgrind memcheck (x86_64): the key and the
//! message are marked undefined ("secret"), then NH, NHPoly1305 and the raw
//! Poly1305 run on every backend valgrind can execute (`soft`, `sse2`,
//! `avx`; valgrind has no AVX-512). A branch or a memory index that depends
//! on a secret is reported as a use of an uninitialised value.
//!
//! ```text
//! cargo build --release --example ct_valgrind --manifest-path nhpoly1305/Cargo.toml
//! valgrind --error-exitcode=1 target/release/examples/ct_valgrind
//! ```
//! Without valgrind the client requests are no-ops and it just runs.

#[cfg(target_arch = "x86_64")]
mod vg {
    /// Valgrind client request (the amd64 magic sequence); a no-op natively.
    fn request(code: u64, addr: *const u8, len: usize) {
        let args: [u64; 6] = [code, addr as u64, len as u64, 0, 0, 0];
        let mut res: u64 = 0;
        // SAFETY: the rotations of rdi total 128 bits (rdi unchanged, and it
        // is declared clobbered), `xchg rbx, rbx` changes nothing; valgrind
        // only reads `args` through rax.
        unsafe {
            core::arch::asm!(
                "rol rdi, 3", "rol rdi, 13", "rol rdi, 61", "rol rdi, 51",
                "xchg rbx, rbx",
                in("rax") args.as_ptr(),
                inout("rdx") res,
                inout("rdi") 0u64 => _,
            );
        }
        std::hint::black_box(res);
    }

    /// VALGRIND_MAKE_MEM_UNDEFINED
    pub fn secret(b: &[u8]) {
        request(0x4d43_0001, b.as_ptr(), b.len());
    }

    /// VALGRIND_MAKE_MEM_DEFINED
    pub fn public(b: &[u8]) {
        request(0x4d43_0002, b.as_ptr(), b.len());
    }
}

#[cfg(target_arch = "x86_64")]
fn main() {
    use nhpoly1305::{Backend, NhPoly1305, Poly1305, nh_with_backend};
    let key: Vec<u8> = (0..1088u32).map(|i| (i * 7 + 3) as u8).collect();
    let msg: Vec<u8> = (0..3000u32).map(|i| (i * 13 + 1) as u8).collect();
    let key: [u8; 1088] = key.try_into().unwrap();
    let nh_key: [u8; 1072] = key[16..].try_into().unwrap();
    let r: [u8; 16] = key[..16].try_into().unwrap();
    vg::secret(&key);
    vg::secret(&nh_key);
    vg::secret(&r);
    vg::secret(&msg);
    let mut names = Vec::new();
    for b in Backend::available() {
        if b == Backend::Avx512 {
            continue; // valgrind cannot run AVX-512
        }
        names.push(b.name());
        for len in [16, 1008, 1024] {
            let mut out = nh_with_backend(&nh_key, &msg[..len], b).unwrap().unwrap();
            vg::public(&out);
            std::hint::black_box(&mut out);
        }
        let mut h = NhPoly1305::with_backend(&key, b).unwrap();
        for len in [0, 16, 19, 1024, 1040, 2500, 3000] {
            let mut out = h.oneshot(&msg[..len]);
            vg::public(&out);
            std::hint::black_box(&mut out);
            h.update(&msg[..len]);
            let mut out = h.finalize_reset();
            vg::public(&out);
            std::hint::black_box(&mut out);
        }
    }
    for len in [0, 5, 16, 48, 64, 100, 3000] {
        let mut p = Poly1305::new(&r);
        p.update(&msg[..len]);
        let mut out = p.finalize();
        vg::public(&out);
        std::hint::black_box(&mut out);
        // The short radix-2^64 paths (up to 64 bytes) and the long one.
        let p = Poly1305::new(&r);
        let mut out = p.oneshot(&msg[..len]);
        vg::public(&out);
        std::hint::black_box(&mut out);
        if let Some((first, rest)) = msg[..len].split_first_chunk::<16>() {
            let mut out = p.oneshot_prefixed(first, rest);
            vg::public(&out);
            std::hint::black_box(&mut out);
        }
    }
    println!("ct_valgrind: ran {}", names.join(" "));
}

#[cfg(not(target_arch = "x86_64"))]
fn main() {
    println!("ct_valgrind: x86_64 only");
}

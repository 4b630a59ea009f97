//! The SM4 key schedule's constants (GB/T 32907) and the schedule over a
//! given S-box, once for every kernel: backends with an S-box instruction
//! pass theirs. The bottom floor: imports nothing from the crate.

/// The system parameter FK.
pub(crate) const FK: [u32; 4] = [0xa3b1_bac6, 0x56aa_3350, 0x677d_9197, 0xb270_22dc];

/// The constants CK: byte `j` of `CK[i]` is `(4i + j)·7 mod 256`.
pub(crate) const CK: [u32; 32] = {
    let mut ck = [0u32; 32];
    let mut i = 0;
    while i < 32 {
        let mut w = 0u32;
        let mut j = 0;
        while j < 4 {
            w = (w << 8) | (((4 * i + j) * 7) % 256) as u32;
            j += 1;
        }
        ck[i] = w;
        i += 1;
    }
    ck
};

/// The key schedule with `tau` as the S-box on the four bytes of a word
/// (backends with an S-box instruction pass theirs; the schedule is a
/// chain of 32 S-box evaluations, so its speed is that of one word).
#[inline(always)]
pub(crate) fn expand_key_with(key: &[u8; 16], tau: impl Fn(u32) -> u32) -> [u32; 32] {
    let mut k = [0u32; 4];
    for (i, ki) in k.iter_mut().enumerate() {
        let bytes = [key[4 * i], key[4 * i + 1], key[4 * i + 2], key[4 * i + 3]];
        *ki = u32::from_be_bytes(bytes) ^ FK[i];
    }
    let mut rk = [0u32; 32];
    for (i, rki) in rk.iter_mut().enumerate() {
        let b = tau(k[(i + 1) % 4] ^ k[(i + 2) % 4] ^ k[(i + 3) % 4] ^ CK[i]);
        let new = k[i % 4] ^ b ^ b.rotate_left(13) ^ b.rotate_left(23);
        k[i % 4] = new;
        *rki = new;
    }
    rk
}

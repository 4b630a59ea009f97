//! The 16-byte block every layer of the crate speaks in, and the XORs on
//! it. The bottom floor: imports nothing from the crate.

use cipher::{InOut, InOutBuf, array::Array, consts::U16};

/// One SM4 block (the same type as `cipher::Block<Sm4>`).
pub(crate) type Blk = Array<u8, U16>;

/// Overwrite blocks that held secrets, with feature `zeroize` (its slice
/// wipe, one fill and an optimisation barrier: its array wipe is a
/// volatile store per byte, 1024 of them for a stage, which cost 3% of a
/// TLS record's sealing and opening).
#[inline(always)]
pub(crate) fn wipe(blocks: &mut [Blk]) {
    #[cfg(feature = "zeroize")]
    zeroize::Zeroize::zeroize(Blk::slice_as_flattened_mut(blocks));
    #[cfg(not(feature = "zeroize"))]
    let _ = blocks;
}

/// `a ^ b` on whole blocks.
#[inline(always)]
pub(crate) fn xor(a: &Blk, b: &Blk) -> Blk {
    (u128::from_ne_bytes(a.0) ^ u128::from_ne_bytes(b.0))
        .to_ne_bytes()
        .into()
}

/// `a ^= b` on the first `a.len()` bytes of `b`.
#[inline(always)]
pub(crate) fn xor_bytes(a: &mut [u8], b: &[u8]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x ^= y;
    }
}

/// One block as a buffer of one.
#[inline(always)]
pub(crate) fn one<'i, 'o>(block: InOut<'i, 'o, Blk>) -> InOutBuf<'i, 'o, Blk> {
    let (i, o) = block.into_raw();
    // SAFETY: `i` and `o` come from one valid `InOut` (equal or disjoint,
    // each valid for one block for the borrow's lifetime).
    unsafe { InOutBuf::from_raw(i, o, 1) }
}

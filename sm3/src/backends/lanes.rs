//! Multi-message SM3: the padding and one-message finish shared by
//! [`Lanes::Serial`](super::Lanes::Serial) and the SIMD lane engine
//! (`engine`, compiled only on targets with a multi-message backend, so
//! that the others carry no unused code).

use super::soft::IV;

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) mod engine;

/// A one-message compression function (`Backend::compress_fn`): what the
/// lanes finish a message with once too few are left to fill them.
pub(crate) type Compress = fn(&mut [u32; 8], &[[u8; 64]]);

/// Padding of a message: the last one or two blocks.
#[derive(Clone, Copy)]
pub(crate) struct Tail {
    buf: [u8; 128],
    /// Number of blocks in `buf` (1 or 2).
    blocks: usize,
}

impl Tail {
    fn new(msg: &[u8]) -> Self {
        let full = msg.len() / 64 * 64;
        let rest = &msg[full..];
        let mut buf = [0u8; 128];
        buf[..rest.len()].copy_from_slice(rest);
        buf[rest.len()] = 0x80;
        let blocks = if rest.len() < 56 { 1 } else { 2 };
        let bits = (msg.len() as u64).wrapping_mul(8);
        buf[64 * blocks - 8..64 * blocks].copy_from_slice(&bits.to_be_bytes());
        Tail { buf, blocks }
    }
}

pub(crate) fn output(state: &[u32; 8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (o, s) in out.chunks_exact_mut(4).zip(state) {
        o.copy_from_slice(&s.to_be_bytes());
    }
    out
}

/// Finish a message from block `from` on, with the one-message backend.
pub(crate) fn finish(
    single: Compress,
    mut state: [u32; 8],
    msg: &[u8],
    tail: &Tail,
    from: usize,
) -> [u8; 32] {
    let (full, _) = msg.as_chunks::<64>();
    if from < full.len() {
        single(&mut state, &full[from..]);
    }
    let first_tail = from.saturating_sub(full.len());
    let (tail_blocks, _) = tail.buf[..64 * tail.blocks].as_chunks::<64>();
    single(&mut state, &tail_blocks[first_tail..]);
    output(&state)
}

/// SM3 of one message with `single`.
pub(crate) fn hash_one(single: Compress, msg: &[u8]) -> [u8; 32] {
    finish(single, IV, msg, &Tail::new(msg), 0)
}

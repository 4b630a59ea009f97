//! x86_64 AES-NI + VAES + AVX2 kernel, for CPUs with VAES but no GFNI
//! (AMD Zen 3).
//!
//! The `avx` kernel (`avx.rs`: its rounds, basis maps, single-block and
//! lane paths) with one change in the eight-block groups: the S-box step
//! of a round is one 256-bit `VAESENCLAST` where `avx` extracts the high
//! half, runs `AESENCLAST` on each `xmm` half and inserts the result (three
//! instructions on the round's chain, the extract and insert on the
//! shuffle port the rotations need). Measured on Zen 4 with AVX2 code
//! (`NOTES.md`); Zen 3 has the same two 256-bit AES units.
//!
//! Uses `avx.rs` and what the x86 kernels share (`backends::x86`); its
//! `impl Kernel` is the `kernel_token!` in the `avx_kernel!` expansion.

use super::avx::{PRE, PRE_INV, ParBlocks, chained_groups, map_xmm, one, rounds_xmm, run_groups};
use crate::block::Blk;
use crate::kernel::{LazyStage, cbc_stages, cfb_stages};

use cipher::{InOut, InOutBuf};

super::avx::avx_kernel!(
    vaes = true,
    features = "avx2,aes,vaes",
    cpu = "AVX2, AES-NI and VAES"
);

#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

pub use aead;
pub use cipher;

// The floors, bottom to top: a module imports only from the floors below
// it (`scripts/module-cycles.py` checks that imports run one way).

// 1: the block type, the error, the key schedule, the declassification
// points and the valgrind requests they use.
mod block;
mod ct;
mod error;
mod schedule;
#[doc(hidden)]
pub mod valgrind;

// 2: the kernel contract; the vector primitives.
mod kernel;
mod simd;

// 3: GHASH (knows nothing of SM4).
mod ghash;

// 4 and 5: the kernels (`backends/*.rs`) and the dispatcher.
mod backends;

// 6: the cipher type; the hidden test hooks.
mod block_cipher;
mod hooks;

// 7: the modes.
mod modes;

#[doc(hidden)]
pub use backends::{Backend, GhashEngine};
pub use block_cipher::{Sm4, backend};
pub use error::Error;
#[doc(hidden)]
pub use hooks::GhashHook;
pub use modes::{
    Ccm, CcmNonceSize, CcmTagSize, Sm4CbcDec, Sm4CbcEnc, Sm4Ccm, Sm4CfbDec, Sm4CfbEnc, Sm4Ctr,
    Sm4Gcm, Sm4Xts, XtsStandard,
};

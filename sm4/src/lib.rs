#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

pub use aead;
pub use cipher;

// Bottom to top; a module imports only from those above it in this list
// (`scripts/module-cycles.py` checks it).
mod backends;
mod block;
mod block_cipher;
mod error;
mod ghash;
mod hooks;
mod kernel;
mod modes;
mod schedule;
mod simd;

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

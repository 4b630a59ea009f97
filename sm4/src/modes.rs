//! The whole-buffer modes: CTR, CBC (with CS3 ciphertext stealing), CFB and
//! XTS, each driven inside one backend's `#[target_feature]` runner
//! ([`with_kernel`](crate::backends::with_kernel)) so that the mode's own work (counters,
//! tweaks, chaining XORs) is compiled with the backend's features and
//! inlined beside the kernel calls.
//!
//! The kernel contract is [`Kernel`](crate::kernel::Kernel): a driver
//! fills a [`Stage`](crate::kernel::Stage) of up to
//! 64 blocks (counter blocks, `P ^ T`, ciphertext), the kernel encrypts it
//! in place with its widest batches first (64-block pairs on `gfni`, 32
//! blocks on the AVX2 backends, 8 on aarch64, 16 bit-sliced on `soft`) and
//! narrower groups only for the rest, and the driver combines the result
//! with the data. Messages of any length reach the wide kernels; only the
//! chained directions (CBC and CFB encryption) run one block at a time.
//!
//! The top floor but the crate root: each mode file uses the cipher type,
//! the dispatcher, the contract and `common`; nothing below imports a
//! mode.

mod cbc;
mod ccm;
mod cfb;
mod common;
mod ctr;
mod gcm;
mod xts;

pub use cbc::{Sm4CbcDec, Sm4CbcEnc};
pub use ccm::{Ccm, CcmNonceSize, CcmTagSize, Sm4Ccm};
pub use cfb::{Sm4CfbDec, Sm4CfbEnc};
pub use ctr::Sm4Ctr;
pub use gcm::Sm4Gcm;
pub use xts::{Sm4Xts, XtsStandard};

#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod aliases;
mod cbc_mac;
mod chain;
mod cmac;
mod macros;
mod xcbc;

pub use crate::aliases::{Sm4CbcMac, Sm4Cmac, Sm4Xcbc, backend};
pub use crate::cbc_mac::CbcMac;
pub use crate::cmac::Cmac;
pub use crate::xcbc::Xcbc;
pub use cipher;
pub use digest::{self, KeyInit, Mac};

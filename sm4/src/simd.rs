//! Vector primitives below the kernels and the GHASH engines (which share
//! them); nothing here knows SM4, GHASH or the modes.

#[cfg(target_arch = "aarch64")]
pub(crate) mod aarch64;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86;

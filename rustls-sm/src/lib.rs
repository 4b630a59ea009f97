#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod glue;
mod record;
mod sm2;

pub use glue::{
    CURVE_SM2, CURVE_SM2_KX, SM2_SM3, SM2SIG_SM3, SM2SIG_SM3_TLS13, TLS_SM4_CCM_SM3,
    TLS_SM4_GCM_SM3, TLS13_SM4_CCM_SM3, TLS13_SM4_GCM_SM3, describe, group_name, load_certs,
    load_private_key, provider, rfc8998_only, suite_name,
};
#[doc(hidden)]
pub use record::hooks as record_hooks;
pub use rustls;
pub use sm2::{CERT_SIGNER_ID, Sm2Key, TLS13_SIGNER_ID, verify as sm2_verify};

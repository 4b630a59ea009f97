#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod glue;
mod record;
mod sm2;

pub use glue::{
    CURVE_SM2, CURVE_SM2_KX, SM2_ALGORITHMS, SM2_KEY_PROVIDER, SM2_SM3, SM2_SM3_OR_EMPTY_ID,
    SM2SIG_SM3, SM2SIG_SM3_TLS13, TLS_SM4_CCM_SM3, TLS_SM4_GCM_SM3, TLS13_SM4_CCM_SM3,
    TLS13_SM4_GCM_SM3, Ticketer, accept_empty_cert_signer_id, describe, extend,
    extend_preferring_sm, group_name, load_certs, load_private_key, rfc8998_only, suite_name,
};
#[cfg(any(feature = "ring", feature = "aws-lc-rs"))]
pub use glue::{provider, provider_preferring_sm};
#[cfg(feature = "hooks")]
pub use record::hooks as record_hooks;
pub use rustls;
pub use sm2::{CERT_SIGNER_ID, Sm2Key, TLS13_SIGNER_ID, verify as sm2_verify};

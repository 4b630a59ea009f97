#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod codec;
mod config;
mod conn;
mod ct;
mod declassify;
mod error;
mod prf;
mod record;
mod sm2;
mod sm2kx;
mod x509;

pub use config::{
    CipherSuite, ClientAuth, ClientConfig, Identity, KeyLog, KeyLogFile, ServerConfig, load_certs,
    load_key,
};
pub use conn::{
    ClientConnection, ConnectionCommon, Reader_ as Reader, ServerConnection, Stream, Writer,
};
pub use error::{Alert, CertificateError, Error};
#[cfg(feature = "hooks")]
pub use record::hooks as record_hooks;
pub use rustls_pki_types::{CertificateDer, ServerName};
pub use sm2::DEFAULT_SIGNER_ID;

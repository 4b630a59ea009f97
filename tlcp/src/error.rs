//! Errors and alerts.

use core::fmt;

/// An alert description (GB/T 38636-2020 section 6.3.4.2, as TLS 1.1's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Alert {
    CloseNotify,
    UnexpectedMessage,
    BadRecordMac,
    RecordOverflow,
    HandshakeFailure,
    BadCertificate,
    UnsupportedCertificate,
    CertificateRevoked,
    CertificateExpired,
    CertificateUnknown,
    IllegalParameter,
    UnknownCa,
    DecodeError,
    DecryptError,
    ProtocolVersion,
    InternalError,
    NoRenegotiation,
    /// Any other code.
    Other(u8),
}

impl Alert {
    pub(crate) fn code(self) -> u8 {
        match self {
            Alert::CloseNotify => 0,
            Alert::UnexpectedMessage => 10,
            Alert::BadRecordMac => 20,
            Alert::RecordOverflow => 22,
            Alert::HandshakeFailure => 40,
            Alert::BadCertificate => 42,
            Alert::UnsupportedCertificate => 43,
            Alert::CertificateRevoked => 44,
            Alert::CertificateExpired => 45,
            Alert::CertificateUnknown => 46,
            Alert::IllegalParameter => 47,
            Alert::UnknownCa => 48,
            Alert::DecodeError => 50,
            Alert::DecryptError => 51,
            Alert::ProtocolVersion => 70,
            Alert::InternalError => 80,
            Alert::NoRenegotiation => 100,
            Alert::Other(c) => c,
        }
    }

    pub(crate) fn from_code(code: u8) -> Self {
        [
            Alert::CloseNotify,
            Alert::UnexpectedMessage,
            Alert::BadRecordMac,
            Alert::RecordOverflow,
            Alert::HandshakeFailure,
            Alert::BadCertificate,
            Alert::UnsupportedCertificate,
            Alert::CertificateRevoked,
            Alert::CertificateExpired,
            Alert::CertificateUnknown,
            Alert::IllegalParameter,
            Alert::UnknownCa,
            Alert::DecodeError,
            Alert::DecryptError,
            Alert::ProtocolVersion,
            Alert::InternalError,
            Alert::NoRenegotiation,
        ]
        .into_iter()
        .find(|a| a.code() == code)
        .unwrap_or(Alert::Other(code))
    }
}

/// Why a certificate was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CertificateError {
    /// The peer sent fewer than a signing and an encryption certificate.
    Missing,
    /// Not an X.509 certificate with an SM2 key that this crate can read.
    Unreadable,
    /// No path to a trusted root: no chain to a trusted CA.
    UnknownIssuer,
    /// Expired, or not valid yet.
    Expired,
    /// A signature in the chain does not verify.
    BadSignature,
    /// The extended key usage does not allow the role (server or client).
    WrongExtendedKeyUsage,
    /// Any other path failure: webpki's reason.
    Path(String),
    /// Not valid for the server name.
    NotValidForName,
    /// The key usage does not allow the certificate's role (a signing
    /// certificate offered for encryption, or the other way round).
    WrongKeyUsage,
}

/// What went wrong on a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The peer sent an alert (fatal, or close_notify before the end).
    AlertReceived(Alert),
    /// A record or message that cannot be parsed.
    Decode(&'static str),
    /// A message that is well formed but not allowed here.
    UnexpectedMessage(&'static str),
    /// A record whose MAC, padding or tag does not verify.
    BadRecordMac,
    /// A record longer than TLCP allows.
    RecordOverflow,
    /// The peer's version is not TLCP's 1.1 (0x0101).
    ProtocolVersion,
    /// No cipher suite in common, or the peer picked one not offered.
    NoCommonSuite,
    /// A certificate was refused.
    InvalidCertificate(CertificateError),
    /// A signature (ServerKeyExchange, CertificateVerify) or Finished that
    /// does not verify, or a key exchange value that does not decrypt.
    DecryptError,
    /// A client certificate was required and none was sent.
    NoClientCertificate,
    /// The peer asked to renegotiate; this crate refuses.
    Renegotiation,
    /// Keys or certificates given to this crate could not be used.
    Config(String),
    /// The operating system's random source failed.
    Random,
    /// The connection was closed, or failed before.
    Closed,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The alert this error sends to the peer.
    pub(crate) fn alert(&self) -> Alert {
        match self {
            Error::AlertReceived(_) | Error::Closed => Alert::CloseNotify,
            Error::Decode(_) => Alert::DecodeError,
            Error::UnexpectedMessage(_) => Alert::UnexpectedMessage,
            Error::BadRecordMac => Alert::BadRecordMac,
            Error::RecordOverflow => Alert::RecordOverflow,
            Error::ProtocolVersion => Alert::ProtocolVersion,
            Error::NoCommonSuite => Alert::HandshakeFailure,
            Error::InvalidCertificate(CertificateError::UnknownIssuer) => Alert::UnknownCa,
            Error::InvalidCertificate(CertificateError::Expired) => Alert::CertificateExpired,
            Error::InvalidCertificate(CertificateError::Unreadable) => {
                Alert::UnsupportedCertificate
            }
            Error::InvalidCertificate(_) => Alert::BadCertificate,
            Error::DecryptError => Alert::DecryptError,
            Error::NoClientCertificate => Alert::HandshakeFailure,
            Error::Renegotiation => Alert::NoRenegotiation,
            Error::Config(_) | Error::Random => Alert::InternalError,
        }
    }
}

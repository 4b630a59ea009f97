//! The error type of the whole-buffer modes.

use core::fmt;

/// Why a whole-buffer mode refused its input. Nothing is written to the
/// buffer when a call returns an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// The message is shorter than the mode's minimum: 16 bytes for an XTS
    /// sector and for CBC-CS3.
    TooShort,
    /// A sector size that is zero or not a multiple of the 16-byte block
    /// ([`Sm4Xts::encrypt_sectors`](crate::Sm4Xts::encrypt_sectors)).
    NotBlockMultiple,
    /// The buffer is not a whole number of sectors.
    NotSectorMultiple,
    /// The sector numbers of a multi-sector call run past `u128::MAX`.
    SectorOverflow,
    /// The two halves of an XTS key are equal (refused as OpenSSL and the
    /// Linux kernel in FIPS mode do: the tweak key must differ from the data
    /// key).
    EqualKeyHalves,
    /// The request runs past the end of the keystream (the 2^128 counter
    /// blocks of [`Sm4Ctr`](crate::Sm4Ctr)).
    KeystreamExhausted,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::TooShort => "sm4: message shorter than one block",
            Error::NotBlockMultiple => "sm4: sector size is not a nonzero multiple of 16 bytes",
            Error::NotSectorMultiple => "sm4: buffer is not a whole number of sectors",
            Error::SectorOverflow => "sm4: sector numbers overflow 128 bits",
            Error::EqualKeyHalves => "sm4: the two halves of the XTS key are equal",
            Error::KeystreamExhausted => "sm4: keystream exhausted",
        })
    }
}

impl core::error::Error for Error {}

impl From<Error> for cipher::StreamCipherError {
    fn from(_: Error) -> Self {
        cipher::StreamCipherError
    }
}

//! CMAC, XCBC-MAC and CBC-MAC over SM4, on each SM4 backend (the tags are
//! computed; `verify` is the `digest` crate's comparison, not ours).

use digest::Mac;
use sm4_mac::{Sm4CbcMac, Sm4Cmac, Sm4Xcbc};
use sm4_simd::Backend;

use super::{LENGTHS, Tally, public, secret_array, secret_vec};

/// Not run: valgrind cannot execute GFNI, AVX-512 or VAES.
const SKIPPED: [Backend; 3] = [Backend::Gfni, Backend::Gfni256, Backend::Vaes];

pub(super) fn check(tally: &mut Tally) {
    for b in Backend::available().filter(|b| !SKIPPED.contains(b)) {
        macro_rules! mac {
            ($($ty:ty, $op:literal;)*) => {$(
                for len in LENGTHS.into_iter().chain([32, 48]) {
                    let key = secret_array::<16>(70);
                    let mut mac = <$ty>::with_backend(&key, b).expect("available");
                    mac.update(&secret_vec(len, 71));
                    public(&mut mac.finalize().into_bytes());
                }
                tally.ran("sm4-mac", b.name(), $op);
            )*};
        }
        mac! {
            Sm4Cmac, "CMAC";
            Sm4Xcbc, "XCBC-MAC";
            Sm4CbcMac, "CBC-MAC";
        }
    }
}

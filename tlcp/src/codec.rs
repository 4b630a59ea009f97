//! Reading and writing the TLS-shaped structures of TLCP: big-endian
//! integers and length-prefixed vectors. A reader never panics: every
//! read past the end is `None`.

/// A cursor over received bytes.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { rest: bytes }
    }

    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.rest.len() < n {
            return None;
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Some(head)
    }

    pub(crate) fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    pub(crate) fn u16(&mut self) -> Option<u16> {
        let b = self.take(2)?;
        Some(u16::from_be_bytes([b[0], b[1]]))
    }

    pub(crate) fn u24(&mut self) -> Option<usize> {
        let b = self.take(3)?;
        Some(usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]))
    }

    /// A vector with a `len_bytes`-byte length prefix.
    pub(crate) fn vec(&mut self, len_bytes: usize) -> Option<&'a [u8]> {
        let len = match len_bytes {
            1 => usize::from(self.u8()?),
            2 => usize::from(self.u16()?),
            3 => self.u24()?,
            _ => return None,
        };
        self.take(len)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    pub(crate) fn rest(&mut self) -> &'a [u8] {
        core::mem::take(&mut self.rest)
    }
}

/// Appends `data` with a `len_bytes`-byte length prefix.
pub(crate) fn put_vec(out: &mut Vec<u8>, len_bytes: usize, data: &[u8]) {
    let len = data.len().to_be_bytes();
    out.extend_from_slice(&len[len.len() - len_bytes..]);
    out.extend_from_slice(data);
}

/// Appends a vector whose body `body` writes, with its length prefix.
pub(crate) fn put_nested(out: &mut Vec<u8>, len_bytes: usize, body: impl FnOnce(&mut Vec<u8>)) {
    let at = out.len();
    out.resize(at + len_bytes, 0);
    body(out);
    let len = (out.len() - at - len_bytes).to_be_bytes();
    out[at..at + len_bytes].copy_from_slice(&len[len.len() - len_bytes..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_short_input() {
        let mut out = Vec::new();
        put_vec(&mut out, 3, b"abc");
        put_nested(&mut out, 2, |o| put_vec(o, 1, b"xy"));
        assert_eq!(out, [0, 0, 3, b'a', b'b', b'c', 0, 3, 2, b'x', b'y']);
        let mut r = Reader::new(&out);
        assert_eq!(r.vec(3), Some(&b"abc"[..]));
        let mut inner = Reader::new(r.vec(2).unwrap());
        assert_eq!(inner.vec(1), Some(&b"xy"[..]));
        assert!(r.is_empty());
        for cut in 0..out.len() {
            let mut r = Reader::new(&out[..cut]);
            let _ = r.vec(3).and_then(|_| r.vec(2));
        }
        assert_eq!(Reader::new(&[0, 5, 1]).vec(2), None);
    }
}

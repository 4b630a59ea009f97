//! Valgrind memcheck client requests, for the workspace's constant-time
//! check (`ctcheck`, and this crate's declassification points, its `ct`
//! module):
//! memcheck reports every branch and memory address computed from bytes
//! marked undefined. Outside valgrind a request is a short sequence of
//! instructions that changes nothing. x86_64 only; elsewhere no-ops.
//! Hidden: a tool for the workspace, not a public API.

/// memcheck's request codes: `('M' << 24) | ('C' << 16)` plus the number.
const MAKE_MEM_UNDEFINED: u64 = 0x4d43_0001;
const MAKE_MEM_DEFINED: u64 = 0x4d43_0002;
/// The core's request that answers how many valgrinds we run under.
const RUNNING_ON_VALGRIND: u64 = 0x1001;

/// One client request about the bytes at `target` (null if none); valgrind's
/// answer, or 0 natively.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn request(code: u64, target: *mut u8, len: usize) -> u64 {
    let args: [u64; 6] = [code, target as u64, len as u64, 0, 0, 0];
    let answer: u64;
    // SAFETY: the four rotations of rdi add up to 128 bits, so rdi ends as
    // it started (it is declared clobbered anyway), and `xchg rbx, rbx`
    // swaps a register with itself: natively only the flags change, and
    // rdx keeps its 0 (the answer when no valgrind is there). Under
    // valgrind the sequence is its request marker: it reads the six words
    // at rax (`args`, alive across the asm) and writes the answer to rdx;
    // the bytes at `target` keep their values. `target` is an operand too
    // (unused by the instructions) so that the compiler counts those bytes
    // as read and written here: it reloads them afterwards rather than
    // reuse copies in registers, which carry no valgrind mark.
    unsafe {
        core::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            in("rax") args.as_ptr(),
            in("rcx") target,
            inout("rdx") 0u64 => answer,
            inout("rdi") 0u64 => _,
            options(nostack),
        );
    }
    answer
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn request(_code: u64, _target: *mut u8, _len: usize) -> u64 {
    0
}

/// Mark `bytes` secret: memcheck reports any branch or address that
/// depends on them. Their contents are unchanged (`&mut`: see `request`).
pub fn mark_secret(bytes: &mut [u8]) {
    request(MAKE_MEM_UNDEFINED, bytes.as_mut_ptr(), bytes.len());
}

/// Mark `bytes` public again, before the caller branches on them or
/// compares them (an output, or a declassified answer).
pub fn mark_public(bytes: &mut [u8]) {
    request(MAKE_MEM_DEFINED, bytes.as_mut_ptr(), bytes.len());
}

/// Whether the program runs under valgrind.
pub fn running_on_valgrind() -> bool {
    request(RUNNING_ON_VALGRIND, core::ptr::null_mut(), 0) != 0
}

/// Whether this build of the crate declares its declassification points
/// to valgrind (`--cfg ct_valgrind`); without it, memcheck reports the
/// intended branches on a tag comparison's answer too.
pub const DECLASSIFIES: bool = cfg!(ct_valgrind);

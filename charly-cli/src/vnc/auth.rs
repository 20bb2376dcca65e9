//! VNC authentication (RFC 6143 §7.2.2): the 16-byte challenge encrypted with DES (ECB, two
//! blocks) under the password, truncated or zero-padded to 8 bytes, each byte's bits reversed.

use des::Des;
use des::cipher::{BlockEncrypt, KeyInit, generic_array::GenericArray};

/// How many bytes of a password VNC authentication uses: the DES key is 8 bytes, and a
/// longer password is cut there (RFC 6143 §7.2.2; servers cut theirs the same way).
pub const PASSWORD_BYTES: usize = 8;

/// Why a password of `len` bytes is refused, when it is longer than [`PASSWORD_BYTES`]: a
/// longer one would look stronger than it is, since only its first 8 bytes are compared.
/// `len` of 1024 or more is "over 1 KiB" (stdin is read no further).
pub fn too_long(len: usize) -> Option<String> {
    (len > PASSWORD_BYTES).then(|| {
        format!(
            "the password is {}, but VNC authentication (RFC 6143 §7.2.2, DES) uses only the first \
             {PASSWORD_BYTES}, as VNC servers do; give at most {PASSWORD_BYTES} (a longer one's first \
             {PASSWORD_BYTES} work the same)",
            if len >= 1024 { "over 1 KiB".to_owned() } else { format!("{len} bytes") },
        )
    })
}

/// The 16-byte response to `challenge` for `password`.
pub fn response(challenge: &[u8; 16], password: &str) -> [u8; 16] {
    let mut key = [0u8; PASSWORD_BYTES];
    for (k, b) in key.iter_mut().zip(password.as_bytes()) {
        *k = b.reverse_bits();
    }
    let cipher = Des::new(GenericArray::from_slice(&key));
    let mut out = *challenge;
    for block in out.chunks_exact_mut(8) {
        cipher.encrypt_block(GenericArray::from_mut_slice(block));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of the response; that it is the right DES is shown against x11vnc's
    /// `-passwd` in tests/vnc.
    #[test]
    fn response_is_des_of_each_block() {
        let zero = [0u8; 16];
        let r = response(&zero, "password");
        assert_eq!(&r[..8], &r[8..], "ECB: equal blocks encrypt equally");
        assert_ne!(r, zero);
        // Truncated at 8 bytes.
        assert_eq!(response(&zero, "password"), response(&zero, "password-longer"));
    }
}

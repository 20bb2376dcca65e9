//! The KDBX password cache in the kernel's user keyring (`keyctl`, key type `user`), through
//! `linux-keyutils`: one key per database path, `charly-kdbx-password:<absolute path>`, with a
//! timeout. The user keyring is per user and survives across processes and terminals, so a
//! password typed once serves every script until the timeout. Failures to reach the keyring
//! (a kernel or sandbox without keyctl) make the cache empty, never an error.

use std::path::Path;

use linux_keyutils::{KeyRing, KeyRingIdentifier};

/// The cache entry of one database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cache {
    description: String,
}

impl Cache {
    /// The entry of the database at `path`.
    pub fn for_kdbx(path: &Path) -> Cache {
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
        Cache { description: format!("charly-kdbx-password:{}", absolute.display()) }
    }

    /// The key's description in the keyring.
    pub fn description(&self) -> &str {
        &self.description
    }

    fn ring() -> Option<KeyRing> {
        KeyRing::from_special_id(KeyRingIdentifier::User, false).ok()
    }

    /// The cached password, if any.
    pub fn get(&self) -> Option<String> {
        let key = Cache::ring()?.search(&self.description).ok()?;
        String::from_utf8(key.read_to_vec().ok()?).ok()
    }

    /// Caches `password` for `timeout` seconds (0: until the keyring is cleared).
    pub fn put(&self, password: &str, timeout: u64) {
        let Some(ring) = Cache::ring() else { return };
        if let Ok(key) = ring.add_key(&self.description, password.as_bytes())
            && timeout > 0
        {
            let _ = key.set_timeout(usize::try_from(timeout).unwrap_or(usize::MAX));
        }
    }

    /// Drops the cached password.
    pub fn forget(&self) {
        if let Some(key) = Cache::ring().and_then(|ring| ring.search(&self.description).ok()) {
            let _ = key.invalidate();
        }
    }
}

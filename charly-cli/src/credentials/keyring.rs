//! The Secret Service keyring (`org.freedesktop.secrets` on the D-Bus session bus) through the
//! `secret-service` crate (on `zbus`). Secrets move over an encrypted dh-ietf1024 session; the
//! probe, which reads no secret, opens a `plain` one (the key exchange costs about 5 ms of a
//! whole process, with gnome-keyring-daemon's half of it). Every call runs
//! on a private current-thread runtime under a deadline ([`TIMEOUT`]), so a provider that does
//! not answer (stopped, or waiting on a prompt no one can see) is reported as such and never
//! hangs a command.
//!
//! Items are found by attributes (`service`, `username` for charly's credentials, as
//! go-keyring and `secret-tool` write them): in the collection aliased `default`, then the one
//! labelled `keyring_collection_label`, then every other. Writes go to the default collection.

use std::collections::HashMap;
use std::time::Duration;

use secret_service::{Collection, EncryptionType, SecretService};

/// How long any keyring operation may take, from connecting to the answer.
pub const TIMEOUT: Duration = Duration::from_secs(3);

/// What the probe found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyringState {
    /// A provider answers and an unlocked collection is there.
    Available,
    /// A provider answers, but every collection is locked.
    Locked,
    /// A provider owns the name but did not answer within [`TIMEOUT`].
    NotAnswering,
    /// No session bus, no provider, or no collection (the reason says which).
    Unavailable(String),
}

impl KeyringState {
    /// `available`, `locked`, `not answering`, `unavailable`.
    pub fn word(&self) -> &'static str {
        match self {
            KeyringState::Available => "available",
            KeyringState::Locked => "locked",
            KeyringState::NotAnswering => "not answering",
            KeyringState::Unavailable(_) => "unavailable",
        }
    }
}

/// Why a keyring operation failed. No variant carries a secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyringError {
    /// No provider on the bus (or no bus).
    #[error("no Secret Service keyring: {0}")]
    Unavailable(String),
    /// The item or collection is locked; charly does not prompt to unlock it.
    #[error(
        "the Secret Service keyring is locked: unlock it (log in to the desktop session, or \
             `gnome-keyring-daemon --unlock` with its password on stdin) and try again"
    )]
    Locked,
    /// The provider did not answer in time.
    #[error("the Secret Service keyring did not answer within {}s (is its daemon stopped, or waiting on a prompt?)", TIMEOUT.as_secs())]
    NotAnswering,
    /// The provider refused or failed.
    #[error("the Secret Service keyring failed: {0}")]
    Failed(String),
}

/// What a lookup found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The secret.
    Found(String),
    /// Only locked items match.
    Locked,
    /// Nothing matches.
    Missing,
}

/// An item found by [`Keyring::search`]: its label, attributes and secret (`None` when locked).
#[derive(Clone, PartialEq, Eq)]
pub struct Found {
    /// The item's label.
    pub label: String,
    /// Its attributes.
    pub attributes: HashMap<String, String>,
    /// Its secret, unless it is locked.
    pub secret: Option<Vec<u8>>,
}

impl std::fmt::Debug for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Found")
            .field("label", &self.label)
            .field("attributes", &self.attributes)
            .finish_non_exhaustive()
    }
}

fn failed(e: secret_service::Error) -> KeyringError {
    match e {
        secret_service::Error::Locked => KeyringError::Locked,
        secret_service::Error::Unavailable => {
            KeyringError::Unavailable("no provider of org.freedesktop.secrets".into())
        }
        secret_service::Error::Prompt | secret_service::Error::PromptDisconnected => KeyringError::Locked,
        other => KeyringError::Failed(other.to_string()),
    }
}

/// The keyring, with the collection label to look in after the default one.
#[derive(Clone, Debug, Default)]
pub struct Keyring {
    label: Option<String>,
}

impl Keyring {
    /// The keyring; `label` is `keyring_collection_label`.
    pub fn new(label: Option<String>) -> Keyring {
        Keyring { label }
    }

    /// Runs `op` against a fresh connection under [`TIMEOUT`], with a session of `encryption`
    /// (`Dh` for anything that reads or writes a secret), on a runtime of its own. Called from
    /// inside a tokio runtime (a plan step, `config setup`'s engine work), that runtime runs on
    /// a thread of its own, since a `block_on` on the caller's thread panics ("Cannot start a
    /// runtime from within a runtime": issue 15's `vnc:` step, and `config setup` reading a
    /// secret from the keyring).
    fn run<T, F>(encryption: EncryptionType, op: F) -> Result<T, KeyringError>
    where
        F: for<'s> AsyncOp<'s, T> + Send,
        T: Send,
    {
        if tokio::runtime::Handle::try_current().is_ok() {
            return std::thread::scope(|s| {
                s.spawn(|| Keyring::run_here(encryption, op)).join().unwrap_or_else(|_| {
                    Err(KeyringError::Failed("the keyring worker thread panicked".into()))
                })
            });
        }
        Keyring::run_here(encryption, op)
    }

    /// [`run`](Self::run) on this thread, which must not be driving a runtime.
    fn run_here<T, F>(encryption: EncryptionType, op: F) -> Result<T, KeyringError>
    where
        F: for<'s> AsyncOp<'s, T>,
    {
        if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none()
            && !std::env::var_os("XDG_RUNTIME_DIR")
                .is_some_and(|d| std::path::Path::new(&d).join("bus").exists())
        {
            return Err(KeyringError::Unavailable(
                "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)".into(),
            ));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| KeyringError::Failed(format!("cannot start a runtime: {e}")))?;
        runtime.block_on(async {
            let work = async {
                let service = SecretService::connect(encryption).await.map_err(|e| match e {
                    secret_service::Error::Zbus(zbus::Error::MethodError(name, _, _))
                        if name.as_str() == "org.freedesktop.DBus.Error.ServiceUnknown" =>
                    {
                        KeyringError::Unavailable(
                            "no provider of org.freedesktop.secrets on the session bus".into(),
                        )
                    }
                    secret_service::Error::Zbus(zbus::Error::InputOutput(io)) => {
                        KeyringError::Unavailable(format!("cannot reach the D-Bus session bus: {io}"))
                    }
                    secret_service::Error::Zbus(zbus::Error::Address(a)) => {
                        KeyringError::Unavailable(format!("bad D-Bus session bus address: {a}"))
                    }
                    other => failed(other),
                })?;
                op.call(&service).await
            };
            tokio::time::timeout(TIMEOUT, work).await.unwrap_or(Err(KeyringError::NotAnswering))
        })
    }

    /// Probes the keyring (bounded by [`TIMEOUT`]).
    pub fn probe(&self) -> KeyringState {
        let result = Keyring::run(EncryptionType::Plain, Probe);
        match result {
            Ok(state) => state,
            Err(KeyringError::NotAnswering) => KeyringState::NotAnswering,
            Err(KeyringError::Locked) => KeyringState::Locked,
            Err(KeyringError::Unavailable(why)) | Err(KeyringError::Failed(why)) => {
                KeyringState::Unavailable(why)
            }
        }
    }

    /// The secret of the first item matching `attributes`, searching the collections in order.
    ///
    /// # Errors
    ///
    /// [`KeyringError`] when the keyring cannot be asked.
    pub fn lookup(&self, attributes: &[(&str, &str)]) -> Result<Lookup, KeyringError> {
        Keyring::run(EncryptionType::Dh, LookupOp { attributes, label: self.label.as_deref() })
    }

    /// Every item matching `attributes`, in every collection.
    ///
    /// # Errors
    ///
    /// [`KeyringError`] when the keyring cannot be asked.
    pub fn search(&self, attributes: &[(&str, &str)]) -> Result<Vec<Found>, KeyringError> {
        Keyring::run(EncryptionType::Dh, SearchOp { attributes })
    }

    /// Stores `secret` under `attributes` in the default collection, replacing an item with the
    /// same attributes.
    ///
    /// # Errors
    ///
    /// [`KeyringError::Locked`] when the default collection is locked (charly does not
    /// prompt), [`KeyringError::Unavailable`] when there is none.
    pub fn store(&self, label: &str, attributes: &[(&str, &str)], secret: &[u8]) -> Result<(), KeyringError> {
        Keyring::run(EncryptionType::Dh, StoreOp { label, attributes, secret })
    }

    /// Deletes every unlocked item matching `attributes`; how many.
    ///
    /// # Errors
    ///
    /// [`KeyringError::Locked`] when matching items are locked.
    pub fn delete(&self, attributes: &[(&str, &str)]) -> Result<usize, KeyringError> {
        Keyring::run(EncryptionType::Dh, DeleteOp { attributes })
    }
}

/// An operation on a connected service (a hand-written async closure: the borrow of the
/// service must outlive the future).
trait AsyncOp<'s, T> {
    /// Runs the operation.
    async fn call(self, service: &'s SecretService<'s>) -> Result<T, KeyringError>;
}

/// Owned attributes, to borrow inside an operation's future.
fn owned(attributes: &[(&str, &str)]) -> Vec<(String, String)> {
    attributes.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// The attribute map the crate takes, borrowed from [`owned`] ones.
fn borrowed(attributes: &[(String, String)]) -> HashMap<&str, &str> {
    attributes.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

struct Probe;

impl<'s> AsyncOp<'s, KeyringState> for Probe {
    async fn call(self, service: &'s SecretService<'s>) -> Result<KeyringState, KeyringError> {
        // The collection writes go to decides: the one aliased `default`. Without one, any
        // persistent collection (gnome-keyring's in-memory `session` collection is always
        // unlocked and does not count).
        if let Ok(default) = service.get_default_collection().await {
            let locked = default.is_locked().await.map_err(failed)?;
            return Ok(if locked { KeyringState::Locked } else { KeyringState::Available });
        }
        let session =
            service.get_collection_by_alias("session").await.ok().map(|c| c.collection_path.clone());
        let collections = service.get_all_collections().await.map_err(failed)?;
        let persistent: Vec<_> =
            collections.iter().filter(|c| Some(&c.collection_path) != session.as_ref()).collect();
        if persistent.is_empty() {
            return Ok(KeyringState::Unavailable("the keyring has no collection to store in".into()));
        }
        for collection in persistent {
            if !collection.is_locked().await.map_err(failed)? {
                return Ok(KeyringState::Available);
            }
        }
        Ok(KeyringState::Locked)
    }
}

/// The collections in lookup order: `default`, the labelled one, the rest.
async fn ordered<'s>(
    service: &'s SecretService<'s>,
    label: Option<&str>,
) -> Result<Vec<Collection<'s>>, KeyringError> {
    let all = service.get_all_collections().await.map_err(failed)?;
    let default = service.get_default_collection().await.ok().map(|c| c.collection_path.clone());
    let mut keyed = Vec::new();
    for collection in all {
        let rank = if Some(&collection.collection_path) == default.as_ref() {
            0
        } else if label.is_some() && collection.get_label().await.ok().as_deref() == label {
            1
        } else {
            2
        };
        keyed.push((rank, collection));
    }
    keyed.sort_by_key(|(rank, _)| *rank);
    Ok(keyed.into_iter().map(|(_, c)| c).collect())
}

struct LookupOp<'a> {
    attributes: &'a [(&'a str, &'a str)],
    label: Option<&'a str>,
}

impl<'s> AsyncOp<'s, Lookup> for LookupOp<'_> {
    async fn call(self, service: &'s SecretService<'s>) -> Result<Lookup, KeyringError> {
        let attributes = owned(self.attributes);
        let label = self.label.map(str::to_owned);
        {
            let label = label.as_deref();
            let attributes = borrowed(&attributes);
            let mut locked = false;
            for collection in ordered(service, label).await? {
                if collection.is_locked().await.map_err(failed)? {
                    locked |=
                        !collection.search_items(attributes.clone()).await.unwrap_or_default().is_empty();
                    continue;
                }
                let items = collection.search_items(attributes.clone()).await.map_err(failed)?;
                for item in items {
                    if item.is_locked().await.map_err(failed)? {
                        locked = true;
                        continue;
                    }
                    let secret = item.get_secret().await.map_err(failed)?;
                    return Ok(Lookup::Found(String::from_utf8_lossy(&secret).into_owned()));
                }
            }
            if !locked {
                // Items in collections that hide their contents while locked.
                let all = service.search_items(attributes.clone()).await.map_err(failed)?;
                locked = !all.locked.is_empty();
            }
            Ok(if locked { Lookup::Locked } else { Lookup::Missing })
        }
    }
}

struct SearchOp<'a> {
    attributes: &'a [(&'a str, &'a str)],
}

impl<'s> AsyncOp<'s, Vec<Found>> for SearchOp<'_> {
    async fn call(self, service: &'s SecretService<'s>) -> Result<Vec<Found>, KeyringError> {
        let attributes = owned(self.attributes);
        {
            let attributes = borrowed(&attributes);
            let result = service.search_items(attributes).await.map_err(failed)?;
            let mut found = Vec::new();
            for (item, locked) in
                result.unlocked.iter().map(|i| (i, false)).chain(result.locked.iter().map(|i| (i, true)))
            {
                let label = item.get_label().await.map_err(failed)?;
                let attributes = item.get_attributes().await.map_err(failed)?;
                let secret = if locked { None } else { Some(item.get_secret().await.map_err(failed)?) };
                found.push(Found { label, attributes, secret });
            }
            Ok(found)
        }
    }
}

struct StoreOp<'a> {
    label: &'a str,
    attributes: &'a [(&'a str, &'a str)],
    secret: &'a [u8],
}

impl<'s> AsyncOp<'s, ()> for StoreOp<'_> {
    async fn call(self, service: &'s SecretService<'s>) -> Result<(), KeyringError> {
        let attributes = owned(self.attributes);
        let label = self.label.to_owned();
        let secret = self.secret.to_vec();
        {
            let attributes = borrowed(&attributes);
            let collection = service.get_default_collection().await.map_err(|e| match e {
                secret_service::Error::NoResult => {
                    KeyringError::Unavailable("the keyring has no default collection to store in".into())
                }
                other => failed(other),
            })?;
            if collection.is_locked().await.map_err(failed)? {
                return Err(KeyringError::Locked);
            }
            collection.create_item(&label, attributes, &secret, true, "text/plain").await.map_err(failed)?;
            Ok(())
        }
    }
}

struct DeleteOp<'a> {
    attributes: &'a [(&'a str, &'a str)],
}

impl<'s> AsyncOp<'s, usize> for DeleteOp<'_> {
    async fn call(self, service: &'s SecretService<'s>) -> Result<usize, KeyringError> {
        let attributes = owned(self.attributes);
        {
            let attributes = borrowed(&attributes);
            let result = service.search_items(attributes).await.map_err(failed)?;
            if !result.locked.is_empty() {
                return Err(KeyringError::Locked);
            }
            for item in &result.unlocked {
                item.delete().await.map_err(failed)?;
            }
            Ok(result.unlocked.len())
        }
    }
}

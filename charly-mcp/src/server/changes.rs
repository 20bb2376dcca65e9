//! [`Subscribers`]: who hears about resources that changed, and what they were last seen as.
//!
//! - `notifications/resources/updated` (MCP 2025-11-25, "Resources", subscriptions): to every
//!   session subscribed to the URI (`resources/subscribe`) and every 2026-07-28
//!   `subscriptions/listen` stream that accepted it.
//! - `notifications/resources/list_changed`: to every session that began with `initialize`
//!   (or listed or subscribed to resources) and every listen stream that accepted
//!   `resourcesListChanged`.
//!
//! Changes are found by comparing, after each call of a tool that is not read-only (see
//! `ServerState::after_call`), the set a `ResourceList` gives with the one last seen, and a
//! hash of each watched resource's contents with the one last seen. Nothing watches the disk:
//! another process's change is found at the next such call. A hash is a 64-bit SipHash of the
//! contents' JSON, so watching a resource keeps 8 bytes, not its contents.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use rmcp::model::{ResourceContents, ResourceUpdatedNotificationParam};
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};

/// What was last seen of the resources that clients watch.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// The `ResourceList`'s entries at the last check (`None`: the server has none).
    pub(crate) list: Option<Vec<rmcp::model::Resource>>,
    /// Each watched URI's contents hash at the last check or when it was first watched
    /// (`None`: it could not be read).
    pub(crate) contents: HashMap<String, Option<u64>>,
}

/// How long one notification may take to be queued for its session: a session whose client
/// stopped reading its stream is skipped after this, not waited for (a tool call's answer waits
/// for the notifications its changes bring).
const SEND_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// `send` within [`SEND_WAIT`]: `Some(its result)`, `None` when it took longer.
async fn bounded<T>(send: impl Future<Output = T>) -> Option<T> {
    tokio::time::timeout(SEND_WAIT, send).await.ok()
}

/// The sessions and streams to notify, and what they were told of last.
#[derive(Default)]
pub(crate) struct Subscribers {
    /// `resources/subscribe`: URI → session number → the session's peer.
    subscriptions: Mutex<HashMap<String, HashMap<u64, Peer<RoleServer>>>>,
    /// Open `subscriptions/listen` streams (protocol 2026-07-28), by listener number.
    listeners: Mutex<HashMap<u64, SubscriptionSink>>,
    next_listener: AtomicU64,
    /// Sessions told about list changes, by session number (dropped once their transport
    /// closed).
    sessions: Mutex<HashMap<u64, Peer<RoleServer>>>,
    /// Held while a check runs, so that checks compare and update one at a time.
    pub(crate) seen: tokio::sync::Mutex<Seen>,
}

fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Subscribers {
    /// Starts with `list` as the resource list last seen.
    pub(crate) fn new(list: Option<Vec<rmcp::model::Resource>>) -> Subscribers {
        Subscribers {
            seen: tokio::sync::Mutex::new(Seen { list, contents: HashMap::new() }),
            ..Default::default()
        }
    }

    /// Tells `session` (its `peer`) about list changes from now on. Sessions whose transport
    /// closed are forgotten here.
    pub(crate) fn register(&self, session: u64, peer: Peer<RoleServer>) {
        let mut sessions = locked(&self.sessions);
        sessions.retain(|_, peer| !peer.is_transport_closed());
        sessions.entry(session).or_insert(peer);
    }

    pub(crate) fn subscribe(&self, uri: &str, session: u64, peer: Peer<RoleServer>) {
        locked(&self.subscriptions).entry(uri.to_owned()).or_default().insert(session, peer);
    }

    pub(crate) fn unsubscribe(&self, uri: &str, session: u64) {
        let mut subs = locked(&self.subscriptions);
        if let Some(m) = subs.get_mut(uri) {
            m.remove(&session);
            if m.is_empty() {
                subs.remove(uri);
            }
        }
    }

    /// Registers an open `subscriptions/listen` stream; its number unregisters it.
    pub(crate) fn listen(&self, sink: SubscriptionSink) -> u64 {
        let id = self.next_listener.fetch_add(1, Ordering::Relaxed);
        locked(&self.listeners).insert(id, sink);
        id
    }

    pub(crate) fn unlisten(&self, id: u64) {
        locked(&self.listeners).remove(&id);
    }

    /// Whether no session or stream watches anything: nothing to check for.
    pub(crate) fn is_idle(&self) -> bool {
        locked(&self.subscriptions).is_empty()
            && locked(&self.listeners).is_empty()
            && locked(&self.sessions).is_empty()
    }

    /// The URIs some session subscribed to or some listen stream accepted, sorted.
    pub(crate) fn watched(&self) -> Vec<String> {
        let mut uris: Vec<String> = locked(&self.subscriptions).keys().cloned().collect();
        for sink in locked(&self.listeners).values() {
            uris.extend(sink.accepted().resource_subscriptions.iter().flatten().cloned());
        }
        uris.sort();
        uris.dedup();
        uris
    }

    /// Sends `notifications/resources/updated` for `uri` to its subscribers and listeners;
    /// returns how many were notified. Sessions whose connection is gone are forgotten.
    pub(crate) async fn notify_updated(&self, uri: &str) -> usize {
        let sinks: Vec<SubscriptionSink> = locked(&self.listeners)
            .values()
            .filter(|sink| {
                sink.accepted().resource_subscriptions.as_ref().is_some_and(|u| u.iter().any(|u| u == uri))
            })
            .cloned()
            .collect();
        let mut sent = 0;
        for sink in sinks {
            if bounded(sink.notify_resource_updated(uri)).await.is_some_and(|r| r.is_ok()) {
                sent += 1;
            }
        }
        let peers: Vec<(u64, Peer<RoleServer>)> = locked(&self.subscriptions)
            .get(uri)
            .map(|m| m.iter().map(|(k, p)| (*k, p.clone())).collect())
            .unwrap_or_default();
        for (session, peer) in peers {
            match bounded(peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))).await {
                Some(Ok(())) => sent += 1,
                Some(Err(_)) => self.unsubscribe(uri, session),
                None => {}
            }
        }
        sent
    }

    /// Sends `notifications/resources/list_changed` to the registered sessions and to the
    /// listeners that accepted it; returns how many were notified.
    pub(crate) async fn notify_list_changed(&self) -> usize {
        let sinks: Vec<SubscriptionSink> = locked(&self.listeners)
            .values()
            .filter(|sink| sink.accepted().resources_list_changed == Some(true))
            .cloned()
            .collect();
        let mut sent = 0;
        for sink in sinks {
            if bounded(sink.notify_resource_list_changed()).await.is_some_and(|r| r.is_ok()) {
                sent += 1;
            }
        }
        let peers: Vec<(u64, Peer<RoleServer>)> =
            locked(&self.sessions).iter().map(|(k, p)| (*k, p.clone())).collect();
        for (session, peer) in peers {
            match bounded(peer.notify_resource_list_changed()).await {
                Some(Ok(())) => sent += 1,
                Some(Err(_)) => drop(locked(&self.sessions).remove(&session)),
                None => {}
            }
        }
        sent
    }
}

/// The hash contents are compared by (`None` for a resource that could not be read).
pub(crate) fn contents_hash(contents: Option<&[ResourceContents]>) -> Option<u64> {
    let json = serde_json::to_vec(contents?).ok()?;
    let mut hasher = DefaultHasher::new();
    json.hash(&mut hasher);
    Some(hasher.finish())
}

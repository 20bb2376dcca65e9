//! [`Owners`]: which token subject opened each session, so that a session is used with its
//! opener's tokens only (the MCP security best practices: "MCP servers SHOULD bind session
//! IDs to user-specific information"; trial finding: a session opened with alice's token took
//! bob's).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use http::HeaderMap;

/// Most sessions remembered; past it the oldest half is forgotten (a forgotten session is
/// unbound, as one opened before the server started).
const MAX_SESSIONS: usize = 16_384;

/// The header of a session's id.
const SESSION_ID: &str = "mcp-session-id";

/// Session id → the subject (`sub`) of the token that opened it (`None`: a token without one).
#[derive(Default)]
pub(super) struct Owners {
    map: Mutex<Book>,
}

/// The sessions recorded, each with the clock at its opening (the oldest are forgotten
/// first), and the clock.
#[derive(Default)]
struct Book {
    sessions: HashMap<String, (u64, Option<String>)>,
    clock: u64,
}

impl Owners {
    /// Whether a request with `headers` may use its session with a token of `subject`.
    ///
    /// # Errors
    ///
    /// Why not: the session was opened with another subject's token.
    pub(super) fn check(&self, headers: &HeaderMap, subject: Option<&str>) -> Result<(), String> {
        let Some(id) = headers.get(SESSION_ID).and_then(|v| v.to_str().ok()) else { return Ok(()) };
        let map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        match map.sessions.get(id) {
            Some((_, owner)) if owner.as_deref() != subject => {
                Err("this session was opened with another subject's access token: a session is used with \
                 its opener's tokens only (open a session of your own)"
                    .to_owned())
            }
            _ => Ok(()),
        }
    }

    /// Records the session a response opened (its `Mcp-Session-Id`, for a request that had
    /// none) as `subject`'s.
    pub(super) fn record(&self, request_had_session: bool, response: &HeaderMap, subject: Option<String>) {
        if request_had_session {
            return;
        }
        let Some(id) = response.get(SESSION_ID).and_then(|v| v.to_str().ok()) else { return };
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        let Book { sessions, clock } = &mut *map;
        *clock += 1;
        if sessions.len() >= MAX_SESSIONS {
            let mut ages: Vec<u64> = sessions.values().map(|(at, _)| *at).collect();
            ages.sort_unstable();
            let cut = ages[ages.len() / 2];
            sessions.retain(|_, (at, _)| *at > cut);
        }
        sessions.insert(id.to_owned(), (*clock, subject));
    }
}

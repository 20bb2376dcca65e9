//! [`Waiting`]: what an OAuth login waits for, and how long persons spent at a browser.

use std::sync::Arc;

/// What an authorization is waiting for at the moment (`authorizing at URL: the token
/// endpoint URL`), so a connect that times out blames the authorization server that did not
/// answer, not the MCP server; and how long a person spent logging in at a browser, which
/// [`crate::client::connect`]'s timeout does not count (the login has its own bound,
/// [`OAuthOptions::login_wait`]).
#[derive(Clone, Default)]
pub(crate) struct Waiting(Arc<std::sync::Mutex<WaitState>>);

#[derive(Default)]
pub(super) struct WaitState {
    what: Option<String>,
    /// When the login a person is doing now started.
    person_since: Option<tokio::time::Instant>,
    /// How long the logins of persons that are over took.
    paused: std::time::Duration,
    /// Whether the session started: a login now is a step-up within one request, which that
    /// request's timeout bounds.
    pub(super) connected: bool,
}

impl Waiting {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, WaitState> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(super) fn set(&self, what: Option<String>) {
        self.lock().what = what;
    }

    /// What the authorization waits for now, if it waits.
    pub(crate) fn get(&self) -> Option<String> {
        self.lock().what.clone()
    }

    /// How long persons spent logging in so far; `None` while one is.
    pub(crate) fn paused(&self) -> Option<std::time::Duration> {
        let state = self.lock();
        state.person_since.is_none().then_some(state.paused)
    }

    /// The session started (see [`WaitState::connected`]).
    pub(crate) fn connected(&self) {
        self.lock().connected = true;
    }

    /// A person's login starts; it ends when the guard is dropped.
    pub(super) fn person(&self) -> PersonLogin {
        self.lock().person_since = Some(tokio::time::Instant::now());
        PersonLogin(self.clone())
    }
}

/// A person logging in at a browser (see [`Waiting::person`]).
pub(super) struct PersonLogin(Waiting);

impl Drop for PersonLogin {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        if let Some(since) = state.person_since.take() {
            state.paused += since.elapsed();
        }
    }
}

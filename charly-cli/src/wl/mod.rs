//! `check.wl.*`: a Wayland desktop (REFERENCE.md §15), this machine's (`.`) or a box's.

mod error;
pub mod session;

pub use self::error::WlError;
pub use self::session::{Place, Session};

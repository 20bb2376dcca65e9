//! The host-state families against the real parts: gpg 2.2, a private D-Bus session bus with
//! gnome-keyring-daemon (Secret Service), keepassxc-cli reading the KDBX files charly writes,
//! udevadm 254 verifying the rules, the kernel keyring in a user namespace of its own. Every
//! test writes under a temporary HOME / XDG_CONFIG_HOME / GNUPGHOME / --root; a missing
//! runtime fails with the install hint (scripts/runtimes.sh).

mod util;

/// `charly mcp serve` for the tool-call tests.
mod mcp;

/// `settings.*`: keys, sources, validation, modes.
mod settings;

/// The keyring backend: unlocked, locked, not answering; migrate-secrets.
mod keyring;

/// `secrets.*` on KDBX 4 files, keepassxc-cli, the kernel keyring cache, MCP.
mod kdbx;

/// `secrets.gpg.*` with gpg.
mod gpg;

/// `secrets.gpg.*`: key specs gpg could take for options, ambiguous specs, protected keys,
/// symmetric files, wrong passphrases.
mod gpgkeys;

/// Over MCP, every path argument of secrets.*, alias.*, udev.* stays inside the project root.
mod confine;

/// `alias.*`: scripts and their quoting.
mod alias;

/// `udev.*`: rules under --root, udevadm verify, status.
mod udev;

/// The credential store as the OAuth token cache of `check mcp`: the keyring from inside the
/// client's runtime, a KDBX file without its password.
mod oauth;

/// A small authorization server that logs clients in on its own.
#[path = "../support/oauth_as.rs"]
mod oauth_as;

//! `charly secrets ...`: the KeePass database, and `secrets gpg ...`: a GPG-encrypted dotenv
//! file of the project.

use std::path::PathBuf;

use charly::McpTool;
use clap::{Args, Subcommand};

use crate::gpg::{
    GpgChanged, GpgDecrypted, GpgDoctor, GpgEnv, GpgExported, GpgImported, GpgPlaintext, GpgRecipients,
    GpgSetup,
};
use crate::secrets::{Exported, Imported, Initialized, KdbxPath, SecretChanged, SecretList, SecretValue};

/// `charly secrets ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum SecretsCmd {
    /// Create a KeePass database (groups charly/vnc, charly/secret, charly/enc) and name it in
    /// config.yml; its password comes from CHARLY_KDBX_PASSWORD (or a prompt on a terminal)
    #[mcp_tool(output = Initialized, destructive = "creates the KeePass database and edits config.yml")]
    Init {
        /// Database path (default: CHARLY_KDBX_PATH, secrets.kdbx_path, ~/.config/charly/secrets.kdbx)
        db_path: Option<PathBuf>,
        /// Replace an existing database (its entries are lost)
        #[arg(long)]
        force: bool,
        /// Derive the key with Argon2id 64 MiB x 3 (a few hundred ms per open) instead of the
        /// fast default (6 MiB x 2, ~10 ms, for scripts that read a secret on every call)
        #[arg(long)]
        strong_kdf: bool,
        /// The database.
        #[command(flatten)]
        kdbx: KdbxArg,
    },
    /// List the entries under a service prefix (`service/key` per line)
    #[mcp_tool(output = SecretList)]
    List {
        /// Service prefix
        #[arg(default_value = "charly")]
        service: String,
        /// The database.
        #[command(flatten)]
        kdbx: KdbxArg,
    },
    /// Print one entry's value
    #[mcp_tool(output = SecretValue)]
    Get {
        /// Service, e.g. charly/secret
        service: String,
        /// Key
        key: String,
        /// The database.
        #[command(flatten)]
        kdbx: KdbxArg,
    },
    /// Store a value (the argument, --generate, or a hidden prompt on a terminal)
    #[mcp_tool(output = SecretChanged, destructive = "writes the KeePass database")]
    Set {
        /// Service, e.g. charly/secret
        service: String,
        /// Key
        key: String,
        /// The value (a tool must give it, or --generate)
        value: Option<String>,
        /// Generate 16 random bytes (hex) as the value; printed on a terminal only
        #[arg(long)]
        generate: bool,
        /// The database.
        #[command(flatten)]
        kdbx: KdbxArg,
    },
    /// Delete an entry (no error when it is absent)
    #[mcp_tool(output = SecretChanged, destructive = "writes the KeePass database", idempotent)]
    Delete {
        /// Service
        service: String,
        /// Key
        key: String,
        /// The database.
        #[command(flatten)]
        kdbx: KdbxArg,
    },
    /// Print every entry under `charly` as a map service → key → value
    #[mcp_tool(output = Exported)]
    Export {
        /// Output format
        #[arg(long, default_value = "yaml", value_parser = ["yaml", "json"])]
        format: String,
        /// The database.
        #[command(flatten)]
        kdbx: KdbxArg,
    },
    /// Copy the plaintext credentials of config.yml and the indexed keyring items into the database
    #[mcp_tool(output = Imported, destructive = "writes the KeePass database")]
    Import {
        /// Only list what would be imported
        #[arg(long)]
        dry_run: bool,
        /// The database.
        #[command(flatten)]
        kdbx: KdbxArg,
    },
    /// Print the database path (and whether it is the default, not yet created)
    #[mcp_tool(output = KdbxPath)]
    Path {
        /// The database.
        #[command(flatten)]
        kdbx: KdbxArg,
    },
    /// A GPG-encrypted dotenv file of the project (.secrets)
    #[command(subcommand)]
    Gpg(GpgCmd),
}

/// Which KeePass database.
#[derive(Args, McpTool, Debug, Clone)]
pub struct KdbxArg {
    /// The KeePass database (default: CHARLY_KDBX_PATH, secrets.kdbx_path, ~/.config/charly/secrets.kdbx)
    #[arg(long)]
    pub kdbx: Option<PathBuf>,
}

/// The encrypted file.
#[derive(Args, McpTool, Debug, Clone)]
pub struct SecretsFile {
    /// The encrypted dotenv file, relative to the project directory
    #[arg(short, long, default_value = ".secrets")]
    pub file: PathBuf,
    /// The name of an environment variable that holds the secret key's passphrase, for a
    /// protected key gpg-agent has not cached (default: CHARLY_GPG_PASSPHRASE, then the passphrase
    /// `setup` stored in the Secret Service)
    #[arg(long, value_name = "VAR")]
    pub passphrase_env: Option<String>,
}

/// `charly secrets gpg ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum GpgCmd {
    /// Print the decrypted file; on failure, say why (recipients, keys, agent)
    #[mcp_tool(output = GpgPlaintext)]
    Show(SecretsFile),
    /// Print the file's variables as `export KEY='value'` lines (nothing when the file is missing)
    #[mcp_tool(output = GpgEnv)]
    Env(SecretsFile),
    /// Decrypt to a file (mode 0600), or to stdout on a terminal
    #[mcp_tool(output = GpgDecrypted, destructive = "writes the plaintext to --output")]
    Decrypt {
        /// The encrypted file
        #[arg(short, long, default_value = ".secrets")]
        input: PathBuf,
        /// Where to write the plaintext (required for a tool)
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// The name of an environment variable that holds the secret key's passphrase (as for `show`)
        #[arg(long, value_name = "VAR")]
        passphrase_env: Option<String>,
    },
    /// Encrypt a dotenv file to one or more recipients
    #[mcp_tool(output = GpgChanged, destructive = "writes the encrypted file")]
    Encrypt {
        /// The plaintext dotenv file
        #[arg(short, long, default_value = ".env")]
        input: PathBuf,
        /// The encrypted file to write
        #[arg(short, long, default_value = ".secrets")]
        output: PathBuf,
        /// Recipient key id, fingerprint or email (at least one)
        #[arg(short, long, required = true)]
        recipient: Vec<String>,
    },
    /// Edit the decrypted file in $EDITOR and re-encrypt it to the same recipients (terminal only)
    #[mcp_tool(output = GpgChanged, destructive = "rewrites the encrypted file")]
    Edit(SecretsFile),
    /// Set KEY=VALUE in the file (created for --recipient when missing)
    #[mcp_tool(output = GpgChanged, destructive = "rewrites the encrypted file", idempotent)]
    Set {
        /// Variable name
        key: String,
        /// Value
        value: String,
        /// The file.
        #[command(flatten)]
        file: SecretsFile,
        /// Recipients, when the file is created
        #[arg(short, long)]
        recipient: Vec<String>,
    },
    /// Remove KEY from the file
    #[mcp_tool(output = GpgChanged, destructive = "rewrites the encrypted file", idempotent)]
    Unset {
        /// Variable name
        key: String,
        /// The file.
        #[command(flatten)]
        file: SecretsFile,
    },
    /// Re-encrypt the file to one more recipient
    #[mcp_tool(output = GpgChanged, destructive = "rewrites the encrypted file", idempotent)]
    AddRecipient {
        /// Key id, fingerprint or email of the new recipient
        key_id: String,
        /// The file.
        #[command(flatten)]
        file: SecretsFile,
    },
    /// List the key ids the file is encrypted to
    #[mcp_tool(output = GpgRecipients)]
    Recipients(SecretsFile),
    /// Import keys from a file or directory (*.asc, *.gpg, ownertrust.txt), or from the Secret Service keystore
    #[mcp_tool(output = GpgImported, destructive = "imports keys into the GnuPG keyring")]
    ImportKey {
        /// Key file or directory
        path: Option<PathBuf>,
        /// Import the key backups stored in the Secret Service (org.gnupg.Key)
        #[arg(long, conflicts_with = "path")]
        from_keystore: bool,
        /// Only this key id (with --from-keystore)
        #[arg(long)]
        key_id: Option<String>,
        /// The secret key's passphrase (for a protected secret key)
        #[arg(long, env = "CHARLY_GPG_PASSPHRASE", hide_env_values = true)]
        passphrase: Option<String>,
    },
    /// Export a key to a directory (public.asc, secret.asc, ownertrust.txt) or to the Secret Service keystore
    #[mcp_tool(output = GpgExported, destructive = "writes key files or Secret Service items")]
    ExportKey {
        /// Directory to write the key files to
        path: Option<PathBuf>,
        /// Store the secret key (and the passphrase, when given) in the Secret Service
        #[arg(long, conflicts_with = "path")]
        to_keystore: bool,
        /// The key (default: the only secret key)
        #[arg(long)]
        key_id: Option<String>,
        /// The secret key's passphrase
        #[arg(long, env = "CHARLY_GPG_PASSPHRASE", hide_env_values = true)]
        passphrase: Option<String>,
    },
    /// Set up gpg-agent (gpg-agent.conf, restart) and a key (import, or generate one)
    #[mcp_tool(output = GpgSetup, destructive = "writes gpg-agent.conf, the GnuPG keyring and the Secret Service")]
    Setup {
        /// Import keys from this file or directory instead of generating one
        #[arg(long = "import")]
        import: Option<PathBuf>,
        /// Import the key backups stored in the Secret Service
        #[arg(long, conflicts_with = "import")]
        from_keystore: bool,
        /// The key's passphrase (a new key is protected with it; empty: none)
        #[arg(long, env = "CHARLY_GPG_PASSPHRASE", hide_env_values = true)]
        passphrase: Option<String>,
        /// The key to use, when several secret keys exist
        #[arg(long)]
        key_id: Option<String>,
        /// Name for a new key (default: git config user.name)
        #[arg(long)]
        name: Option<String>,
        /// Email for a new key (default: git config user.email)
        #[arg(long)]
        email: Option<String>,
        /// Key type of a new key
        #[arg(long, default_value = "rsa4096", value_parser = ["rsa4096", "ed25519"])]
        algo: String,
        /// Do not store the passphrase in the Secret Service
        #[arg(long)]
        skip_secret_service: bool,
    },
    /// Check gpg, the agent, the keys, the Secret Service and the file; exit 1 with the issues
    #[mcp_tool(output = GpgDoctor)]
    Doctor(SecretsFile),
}

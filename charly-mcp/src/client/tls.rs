//! TLS for the HTTP transports and the OAuth requests: [`TlsOptions`] and the `reqwest` client
//! they build ([`http_client`]).
//!
//! The backend is rustls with the platform verifier (`rustls-platform-verifier`, reqwest's own
//! default: on Linux the system's CA bundle as `rustls-native-certs` finds it, on macOS and
//! Windows the operating system's verifier) and ring as the crypto provider. A private CA
//! (`--ca-file`) is added to the system's roots; `--insecure` turns verification off and the
//! caller says so on stderr.

use std::path::PathBuf;
use std::sync::Once;

/// How the client checks a server's certificate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TlsOptions {
    /// PEM file of one or more CA certificates trusted besides the system's roots
    /// (`--ca-file`).
    pub ca_file: Option<PathBuf>,
    /// Accept any certificate, for any host (`--insecure`): only when asked, and the CLI warns
    /// on stderr.
    pub insecure: bool,
}

impl TlsOptions {
    /// Options of `--ca-file` and `--insecure`.
    pub fn new(ca_file: Option<PathBuf>, insecure: bool) -> Self {
        TlsOptions { ca_file, insecure }
    }

    /// The warning the CLI prints on stderr when [`TlsOptions::insecure`] is set.
    pub const INSECURE_WARNING: &'static str = "charly: warning: --insecure: TLS certificates are not verified; anyone on the path can \
         read and change this session";
}

/// Installs ring as rustls's process-wide crypto provider (once; a provider installed before
/// is kept). charly's own clients call it; a program that builds its own `reqwest` clients in a
/// process with charly's client (reqwest is built with rustls and no provider of its own: ring
/// keeps the binary small) calls it first, or reqwest panics with "No rustls crypto provider".
pub fn install_tls_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Another part of the process may have installed one first: that one is used.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A `reqwest` client that verifies certificates as `tls` says. With `follow_redirects` it
/// follows at most 10 redirects within the origin of the first URL, and refuses one to
/// another origin with a [`CrossOrigin`] error: the headers an endpoint is given (`--header`,
/// `.mcp.json` `headers`, an `Authorization`) are meant for that server alone (reqwest would
/// send all but `Authorization` and cookies along). No `Referer` is sent. Without it (OAuth
/// requests) no redirect is followed: each is looked at.
///
/// # Errors
///
/// `--ca-file PATH: ...` when the file cannot be read or holds no PEM certificate; the
/// builder's error otherwise.
pub fn http_client(tls: &TlsOptions, follow_redirects: bool) -> Result<reqwest::Client, String> {
    install_tls_provider();
    let mut builder = reqwest::Client::builder().referer(false);
    builder = builder.redirect(if follow_redirects {
        reqwest::redirect::Policy::custom(same_origin)
    } else {
        reqwest::redirect::Policy::none()
    });
    if let Some(path) = &tls.ca_file {
        let pem =
            std::fs::read(path).map_err(|e| format!("--ca-file {}: cannot read it: {e}", path.display()))?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| format!("--ca-file {}: not a PEM file of CA certificates: {e}", path.display()))?;
        if certs.is_empty() {
            return Err(format!(
                "--ca-file {}: no certificate in it (expected PEM blocks `-----BEGIN CERTIFICATE-----`)",
                path.display()
            ));
        }
        builder = builder.tls_certs_merge(certs);
    }
    if tls.insecure {
        builder = builder.tls_danger_accept_invalid_certs(true);
    }
    builder.build().map_err(|e| format!("the HTTP client cannot be built: {}", super::error::error_chain(&e)))
}

/// Most redirects followed within one origin.
const MAX_REDIRECTS: usize = 10;

/// A redirect to another origin than the request's, refused (see [`http_client`]).
#[derive(Debug, thiserror::Error)]
#[error(
    "the server redirected from {from} to another origin, {to}: charly does not follow redirects to \
     another origin, since the endpoint's headers (--header, .mcp.json headers) would go there too; \
     give the URL it redirects to, if that server is meant"
)]
pub(crate) struct CrossOrigin {
    /// The origin of the URL requested.
    pub(crate) from: String,
    /// The origin of the redirect's target.
    pub(crate) to: String,
}

/// The redirect policy of [`http_client`]: same origin only, at most [`MAX_REDIRECTS`].
fn same_origin(attempt: reqwest::redirect::Attempt<'_>) -> reqwest::redirect::Action {
    let Some(first) = attempt.previous().first() else { return attempt.follow() };
    let (from, to) = (first.origin(), attempt.url().origin());
    if from != to {
        let error = CrossOrigin { from: from.ascii_serialization(), to: to.ascii_serialization() };
        return attempt.error(error);
    }
    if attempt.previous().len() > MAX_REDIRECTS {
        return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
    }
    attempt.follow()
}

/// `TLS: the certificate of HOST was refused: <why>` when `error` (a reqwest connect error)
/// failed in certificate verification, with what to do; `None` for any other failure.
pub(crate) fn certificate_failure(error: &reqwest::Error) -> Option<String> {
    let host = error.url().and_then(|u| u.host_str()).unwrap_or("the server").to_owned();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return Some(describe(&host, tls));
        }
        // The platform verifier's error reaches reqwest as text inside an io::Error.
        let text = e.to_string();
        if let Some((_, why)) = text.split_once("invalid peer certificate: ") {
            return Some(advice(&host, &describe_text(&host, why)));
        }
        source = e.source();
    }
    None
}

fn describe(host: &str, error: &rustls::Error) -> String {
    use rustls::CertificateError as C;
    let why = match error {
        rustls::Error::InvalidCertificate(C::UnknownIssuer) => {
            "it is signed by a CA this machine does not trust (unknown issuer)".to_owned()
        }
        rustls::Error::InvalidCertificate(C::NotValidForName)
        | rustls::Error::InvalidCertificate(C::NotValidForNameContext { .. }) => {
            format!("it is not valid for the name {host}")
        }
        rustls::Error::InvalidCertificate(C::ExpiredContext { not_after, .. }) => {
            format!("it expired on {}", utc(not_after.as_secs()))
        }
        rustls::Error::InvalidCertificate(C::Expired) => "it has expired".to_owned(),
        rustls::Error::InvalidCertificate(C::NotValidYetContext { not_before, .. }) => {
            format!("it is not valid before {}", utc(not_before.as_secs()))
        }
        rustls::Error::InvalidCertificate(C::NotValidYet) => "it is not valid yet".to_owned(),
        rustls::Error::InvalidCertificate(C::Revoked) => "it is revoked".to_owned(),
        rustls::Error::InvalidCertificate(C::BadSignature) => "its signature does not verify".to_owned(),
        other => other.to_string(),
    };
    advice(host, &why)
}

/// `secs` since the Unix epoch as `2024-05-01 12:00:00 UTC` (proleptic Gregorian calendar;
/// written here: a date crate for one line of an error is not worth its size).
fn utc(secs: u64) -> String {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's days-to-civil algorithm.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC", rest / 3600, rest % 3600 / 60, rest % 60)
}

/// The number after `label` in `text` (`not valid after 1700000000 (UNIX)`), as a date.
fn date_after(text: &str, label: &str) -> Option<String> {
    let (_, rest) = text.split_once(label)?;
    let digits: String = rest.trim_start().chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().map(utc)
}

/// rustls's `CertificateError` as its `Display`/`Debug` text gives it, in words (its Unix
/// times as dates).
fn describe_text(host: &str, why: &str) -> String {
    if let Some(date) = date_after(why, "not valid after") {
        return format!("it expired on {date}");
    }
    if let Some(date) = date_after(why, "not valid before") {
        return format!("it is not valid before {date}");
    }
    let known = [
        ("UnknownIssuer", "it is signed by a CA this machine does not trust (unknown issuer)".to_owned()),
        ("not valid for name", format!("it is not valid for the name {host} ({why})")),
        ("NotValidForName", format!("it is not valid for the name {host}")),
        ("Expired", "it has expired".to_owned()),
        ("expired", "it has expired".to_owned()),
        ("NotValidYet", "it is not valid yet".to_owned()),
        ("Revoked", "it is revoked".to_owned()),
        ("BadSignature", "its signature does not verify".to_owned()),
    ];
    known
        .into_iter()
        .find(|(word, _)| why.contains(word))
        .map(|(_, text)| text)
        .unwrap_or_else(|| why.to_owned())
}

/// The hint [`advice`] ends with; [`fit_hint`] replaces it when `--ca-file` was given or the
/// name is what is wrong.
const CA_HINT: &str = "(for a private CA give --ca-file CA.pem; --insecure skips the check)";

fn advice(host: &str, why: &str) -> String {
    format!("TLS: the certificate of {host} was refused: {why} {CA_HINT}")
}

/// `message` with the hint of a refused certificate fitted to `tls`: a certificate for another
/// name is fixed by the name connected to, not by a CA; with `--ca-file` given, that file's CA
/// did not sign the certificate.
pub(crate) fn fit_hint(message: &str, tls: &TlsOptions) -> String {
    if !message.contains(CA_HINT) {
        return message.to_owned();
    }
    let hint = if message.contains("it is not valid for the name") {
        "(connect by a name the certificate holds; --insecure skips the check)".to_owned()
    } else if let Some(path) = &tls.ca_file {
        // No CA of that name, or one of that name whose key did not sign it.
        if message.contains("unknown issuer") || message.contains("its signature does not verify") {
            format!(
                "(the CA in --ca-file {} did not sign it either: give the CA that issued the server's \
                 certificate; --insecure skips the check)",
                path.display()
            )
        } else {
            "(--insecure skips the check)".to_owned()
        }
    } else {
        return message.to_owned();
    };
    message.replace(CA_HINT, &hint)
}

#[cfg(test)]
mod tests {
    #[test]
    fn certificate_times_are_dates() {
        assert_eq!(super::utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(super::utc(1_709_251_199), "2024-02-29 23:59:59 UTC");
        assert_eq!(super::utc(4_102_444_800), "2100-01-01 00:00:00 UTC");
        let why = "certificate expired: verification time 1765000000 (UNIX), but certificate is not valid after \
                   1700000000 (65000000 seconds ago)";
        assert_eq!(super::describe_text("h", why), "it expired on 2023-11-14 22:13:20 UTC");
        let why = "certificate not valid yet: verification time 1 (UNIX), but certificate is not valid before 86400 \
                   (86399 seconds in future)";
        assert_eq!(super::describe_text("h", why), "it is not valid before 1970-01-02 00:00:00 UTC");
    }
}

//! VeNCrypt (RFB security type 19) and the TLS under it: rustls with ring, the server's
//! certificate checked against the system's roots plus `--ca-file`, or not at all with
//! `--insecure` (as charly's MCP client does).
//!
//! A certificate of `--ca-file` is also trusted as the server's own certificate when the
//! server presents exactly it (byte for byte: pinned, as SSH pins a host key, so its CA flag,
//! names and dates are not looked at). That is what a VNC server set up with one
//! `openssl req -x509` certificate presents: a self-signed certificate that says CA:TRUE,
//! which WebPKI refuses as a server's (`CaUsedAsEndEntity`), and often without the address
//! in its names. Any other certificate is checked as WebPKI checks it.
//!
//! VeNCrypt 0.2 (the VeNCrypt specification, as TigerVNC and libvncserver speak it): the
//! server sends its version (0.2), the client answers 0.2, the server acks (0), lists its
//! sub-types (u8 count, u32 each), the client picks one (u32), the server accepts (1); then
//! the TLS handshake, and inside TLS the sub-type's own authentication and SecurityResult.
//!
//! Sub-types charly speaks: **X509None (260)**, **X509Vnc (261)**, **X509Plain (262)**: TLS
//! with a server certificate, then nothing, VNC authentication, or user + password. The
//! anonymous ones, TLSNone (257), TLSVnc (258), TLSPlain (259), are anonymous Diffie-Hellman
//! TLS (GnuTLS `ANON-DH`): no certificate at all, which rustls does not do (TLS 1.3 has no
//! anonymous key exchange, and rustls implements none for 1.2), so a server offering only
//! those gets an error saying so. Plain VeNCrypt (256, the password in clear) is refused.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme, StreamOwned,
};

use super::VncError;
use charly::client::TlsOptions;

/// VeNCrypt sub-type X509None: TLS with a certificate, no further authentication.
pub const X509_NONE: u32 = 260;
/// VeNCrypt sub-type X509Vnc: TLS with a certificate, then VNC authentication.
pub const X509_VNC: u32 = 261;
/// VeNCrypt sub-type X509Plain: TLS with a certificate, then user name and password.
pub const X509_PLAIN: u32 = 262;

/// The name of a VeNCrypt sub-type number.
pub fn subtype_name(t: u32) -> String {
    let name = match t {
        1 => "None",
        2 => "VncAuth",
        256 => "Plain",
        257 => "TLSNone",
        258 => "TLSVnc",
        259 => "TLSPlain",
        260 => "X509None",
        261 => "X509Vnc",
        262 => "X509Plain",
        263 => "TLSSASL",
        264 => "X509SASL",
        _ => return format!("unknown ({t})"),
    };
    format!("{name} ({t})")
}

/// The sub-type charly picks from `offered`: with a password X509Vnc, X509Plain, then
/// X509None; without one X509None only.
pub fn choose(offered: &[u32], have_password: bool) -> Option<u32> {
    let order: &[u32] = if have_password { &[X509_VNC, X509_PLAIN, X509_NONE] } else { &[X509_NONE] };
    order.iter().copied().find(|t| offered.contains(t))
}

/// Why no offered sub-type is usable, for [`VncError::UnsupportedSecurity`].
pub fn unusable(offered: &[u32], have_password: bool) -> String {
    let list = offered.iter().map(|&t| subtype_name(t)).collect::<Vec<_>>().join(", ");
    let anonymous = offered.iter().any(|t| (257..=259).contains(t));
    let mut why = format!(
        "VeNCrypt (19) with sub-types {list}; charly speaks X509None (260), X509Vnc (261) and X509Plain (262)"
    );
    if anonymous {
        why.push_str(
            ": TLSNone/TLSVnc/TLSPlain are anonymous TLS (no certificate), which rustls does not do; \
             give the server a certificate and offer X509 sub-types (TigerVNC: -SecurityTypes X509Vnc \
             -X509Cert CERT.pem -X509Key KEY.pem)",
        );
    }
    if !have_password && offered.iter().any(|t| [X509_VNC, X509_PLAIN].contains(t)) {
        why.push_str("; X509Vnc/X509Plain need a password (VNC_PASSWORD or `charly check vnc passwd`)");
    }
    why
}

/// One TLS session, shared by the client's read and write halves (used one at a time: the
/// client is synchronous).
#[derive(Clone)]
#[allow(missing_debug_implementations)]
pub struct TlsHalf(Arc<Mutex<StreamOwned<ClientConnection, super::sock::Sock>>>);

impl Read for TlsHalf {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.lock().map_err(|_| std::io::Error::other("TLS session poisoned"))?.read(buf)
    }
}

impl Write for TlsHalf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().map_err(|_| std::io::Error::other("TLS session poisoned"))?.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.lock().map_err(|_| std::io::Error::other("TLS session poisoned"))?.flush()
    }
}

/// The client's socket: plain TCP, or TLS over it after VeNCrypt.
#[allow(missing_debug_implementations)]
pub enum Stream {
    /// Before (or without) TLS: the socket, bounded by the call's deadline.
    Tcp(super::sock::Sock),
    /// After VeNCrypt started TLS.
    Tls(TlsHalf),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// The [`super::rfb::Upgrade`] of a [`Stream`]: TLS for `host` with `tls`'s verification
/// (the configuration built only when VeNCrypt is chosen).
pub fn upgrader(
    host: String,
    tls: TlsOptions,
) -> impl FnMut(Stream, Stream) -> Result<(Stream, Stream), VncError> {
    move |r, w| {
        drop(w);
        let Stream::Tcp(tcp) = r else {
            return Err(VncError::Protocol("TLS started twice".into()));
        };
        let (a, b) = start(tcp, &host, config(&tls)?, tls.ca_file.as_deref())?;
        Ok((Stream::Tls(a), Stream::Tls(b)))
    }
}

/// The rustls client configuration of `tls`.
///
/// # Errors
///
/// [`VncError::Usage`] naming `--ca-file` when the file cannot be read or holds no PEM
/// certificate.
pub fn config(tls: &TlsOptions) -> Result<Arc<ClientConfig>, VncError> {
    charly::client::install_tls_provider();
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| VncError::Protocol(format!("TLS setup: {e}")))?;
    if tls.insecure {
        return Ok(Arc::new(
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCert(provider)))
                .with_no_client_auth(),
        ));
    }
    let mut roots = RootCertStore::empty();
    // The system's roots: unreadable ones are skipped (a private CA comes with --ca-file).
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    if let Some(path) = &tls.ca_file {
        let pem = std::fs::read(path)
            .map_err(|e| VncError::Usage(format!("--ca-file {}: cannot read it: {e}", path.display())))?;
        use rustls::pki_types::pem::PemObject as _;
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(&pem).collect::<Result<_, _>>().map_err(|e| {
                VncError::Usage(format!(
                    "--ca-file {}: not a PEM file of CA certificates: {e}",
                    path.display()
                ))
            })?;
        if certs.is_empty() {
            return Err(VncError::Usage(format!(
                "--ca-file {}: no certificate in it (expected PEM blocks `-----BEGIN CERTIFICATE-----`)",
                path.display()
            )));
        }
        // Each is a CA, and pinned as the server's own certificate (see the module docs).
        roots.add_parsable_certificates(certs.iter().cloned());
        let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| VncError::Usage(format!("--ca-file {}: {e}", path.display())))?;
        return Ok(Arc::new(
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Pinned { pinned: certs, webpki }))
                .with_no_client_auth(),
        ));
    }
    Ok(Arc::new(builder.with_root_certificates(roots).with_no_client_auth()))
}

/// `--ca-file`: a server certificate that is one of the file's, byte for byte, is trusted
/// (pinned); any other is checked by WebPKI against the system's roots and the file's.
#[derive(Debug)]
struct Pinned {
    pinned: Vec<CertificateDer<'static>>,
    webpki: Arc<rustls::client::WebPkiServerVerifier>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if self.pinned.iter().any(|p| p.as_ref() == end_entity.as_ref()) {
            return Ok(ServerCertVerified::assertion());
        }
        self.webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// Runs the TLS handshake over `tcp` for `host` (the name or IP address the certificate must
/// be valid for) and returns the session's two halves; `ca_file` is the `--ca-file` the
/// configuration was made with, for the hint of a refused certificate.
///
/// # Errors
///
/// [`VncError::Tls`] with the reason (a refused certificate says how to trust it).
pub fn start(
    tcp: super::sock::Sock,
    host: &str,
    config: Arc<ClientConfig>,
    ca_file: Option<&std::path::Path>,
) -> Result<(TlsHalf, TlsHalf), VncError> {
    let name = ServerName::try_from(host.trim_start_matches('[').trim_end_matches(']').to_owned())
        .map_err(|e| VncError::Tls(format!("{host:?} is not a host name or IP address for TLS: {e}")))?;
    let conn = ClientConnection::new(config, name).map_err(|e| VncError::Tls(e.to_string()))?;
    let mut stream = StreamOwned::new(conn, tcp);
    while stream.conn.is_handshaking() {
        stream.conn.complete_io(&mut stream.sock).map_err(|e| match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                VncError::from(e).waiting_for("TLS handshake answer")
            }
            _ => VncError::Tls(describe(host, &e, ca_file)),
        })?;
    }
    let half = TlsHalf(Arc::new(Mutex::new(stream)));
    Ok((half.clone(), half))
}

fn describe(host: &str, e: &std::io::Error, ca_file: Option<&std::path::Path>) -> String {
    use rustls::CertificateError::{NotValidForName, NotValidForNameContext};
    let tls = e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>());
    let pin = "or pin it: --ca-file with the server's own certificate (e.g. the file its -X509Cert names) is \
               trusted as it is, for any name";
    match tls {
        // webpki checks the name after the chain: the certificate is trusted, its name is not this one.
        Some(rustls::Error::InvalidCertificate(c @ (NotValidForName | NotValidForNameContext { .. }))) => {
            let names = match c {
                NotValidForNameContext { presented, .. } if !presented.is_empty() => {
                    // rustls gives them as `DnsName("vnc.example")`: the name alone.
                    let bare = |n: &String| {
                        let inner = n.split_once('(').and_then(|(_, r)| r.strip_suffix(')')).unwrap_or(n);
                        inner.trim_matches('"').to_owned()
                    };
                    format!(" (it names {})", presented.iter().map(bare).collect::<Vec<_>>().join(", "))
                }
                _ => String::new(),
            };
            format!(
                "the certificate of {host} is not valid for the name {host}{names}: dial the server by a name its \
                 certificate holds (--vnc-addr NAME:PORT), {pin}; --insecure skips the check"
            )
        }
        Some(rustls::Error::InvalidCertificate(c)) => match ca_file {
            None => format!(
                "the certificate of {host} was refused: {} (for a private CA give --ca-file CA.pem, for a \
                 self-signed server certificate --ca-file with that certificate; --insecure skips the check)",
                refused(c)
            ),
            Some(file) => format!(
                "the certificate of {host} was refused: {}; --ca-file {} holds neither the CA that signed it \
                 nor the certificate itself (give the CA's certificate, {pin}; --insecure skips the check)",
                refused(c),
                file.display()
            ),
        },
        Some(other) => format!("handshake with {host}: {other}"),
        None => format!("handshake with {host}: {e}"),
    }
}

/// Why a certificate was refused, in words (rustls' own, except webpki's bare error names).
fn refused(c: &rustls::CertificateError) -> String {
    let text = c.to_string();
    match text.as_str() {
        t if t.contains("CaUsedAsEndEntity") => {
            "it is a CA's certificate, sent as the server's own (the server needs a certificate of its own, \
             signed by the CA)"
                .into()
        }
        t if t.contains("UnknownIssuer") || matches!(c, rustls::CertificateError::UnknownIssuer) => {
            "its issuer is not trusted".into()
        }
        _ => text,
    }
}

/// `--insecure`: any certificate, any name; signatures still checked with the provider.
#[derive(Debug)]
struct AnyCert(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AnyCert {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subtype_choice_prefers_authenticated_x509() {
        assert_eq!(choose(&[257, 258, 260, 261], true), Some(X509_VNC));
        assert_eq!(choose(&[260, 262], true), Some(X509_PLAIN));
        assert_eq!(choose(&[260, 261], false), Some(X509_NONE));
        assert_eq!(choose(&[257, 258], true), None);
        let why = unusable(&[257, 258], true);
        assert!(why.contains("TLSNone (257)") && why.contains("anonymous"), "{why}");
        let why = unusable(&[261], false);
        assert!(why.contains("need a password"), "{why}");
    }
}

//! VeNCrypt against TigerVNC's Xvnc: X509 sub-types with a certificate the test's own CA
//! signs for 127.0.0.1 (rcgen), checked with `--ca-file`, refused without it, accepted with
//! `--insecure`; anonymous TLS sub-types refused with the reason, or passed over for VNC
//! authentication when the server offers that too.

use std::path::{Path, PathBuf};
use std::time::Duration;

use charly::client::TlsOptions;
use charly_cli::vnc::{self, Op, Server, VncError, tls};

use crate::lab::Lab;

const T: Duration = Duration::from_secs(10);

/// Files of one TLS setup: the CA's certificate, the server's certificate and key (PEM), and
/// a TigerVNC password file for `secret1`.
struct Pki {
    _dir: tempfile::TempDir,
    ca: PathBuf,
    cert: String,
    key: String,
    passwd: String,
}

fn pki(names: &[&str]) -> Pki {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
    let dir = tempfile::tempdir().unwrap();
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, "charly VNC test CA");
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>()).unwrap();
    let cert = leaf.signed_by(&key, &issuer).unwrap();
    let write = |name: &str, text: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let ca = write("ca.pem", ca_cert.pem().as_bytes());
    let cert = write("server.pem", cert.pem().as_bytes()).display().to_string();
    let key = write("server.key", key.serialize_pem().as_bytes()).display().to_string();
    // TigerVNC's obfuscated password file, made by its own tool.
    let out = std::process::Command::new("vncpasswd")
        .arg("-f")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write as _;
            c.stdin.take().unwrap().write_all(b"secret1\n")?;
            c.wait_with_output()
        })
        .expect("vncpasswd (tigervnc-tools)");
    assert!(out.status.success() && out.stdout.len() == 8, "vncpasswd -f: {out:?}");
    let passwd = write("passwd", &out.stdout).display().to_string();
    Pki { _dir: dir, ca, cert, key, passwd }
}

fn xvnc(security: &str, p: &Pki) -> Lab {
    Lab::xtigervnc_with(security, &["-X509Cert", &p.cert, "-X509Key", &p.key, "-PasswordFile", &p.passwd])
}

fn server(lab: &Lab, ca: Option<&Path>, insecure: bool) -> Server {
    let mut s = Server::new(lab.addr.clone(), ".", vec![".".into()]);
    s.tls = TlsOptions::new(ca.map(Path::to_owned), insecure);
    s
}

#[test]
fn x509vnc_verified_with_the_ca_file() {
    let p = pki(&["127.0.0.1"]);
    let lab = xvnc("VeNCrypt,TLSVnc,X509Vnc", &p);
    lab.x("xsetroot", &["-solid", "#3366cc"]);
    let s = server(&lab, Some(&p.ca), false);
    let mut c = vnc::connect(&s, Some("secret1"), T).unwrap();
    assert_eq!(c.info.security, vnc::rfb::SEC_VENCRYPT);
    assert_eq!(c.info.subtype, Some(tls::X509_VNC), "X509Vnc preferred over anonymous TLSVnc");
    assert_eq!((c.info.width, c.info.height), (320, 240));
    let fb = c.screenshot().unwrap();
    for (x, y) in [(0, 0), (160, 120), (319, 239)] {
        assert_eq!(fb.pixel(x, y), Some([0x33, 0x66, 0xcc]), "pixel ({x}, {y}) through TLS");
    }
    drop(c);
    // The status report names the sub-type.
    let reply = vnc::perform(&s, Some("secret1"), &Op::Status, T).unwrap();
    let v = reply.json.to_string();
    assert!(v.contains("VeNCrypt (19) X509Vnc (261)"), "{v}");
    // Input travels through TLS too: the pointer lands where it was sent.
    vnc::perform(&s, Some("secret1"), &Op::Mouse { x: 77, y: 66 }, T).unwrap();
    lab.pointer_reaches(77, 66);
    // A wrong password inside TLS: refused as such; the server stays up.
    let err = vnc::connect(&s, Some("wrong"), T).err().expect("wrong password");
    assert!(matches!(err, VncError::AuthFailed(_)), "{err}");
    vnc::connect(&s, Some("secret1"), T).unwrap();
}

#[test]
fn certificate_refused_without_the_ca_and_accepted_insecure() {
    let p = pki(&["127.0.0.1"]);
    let lab = xvnc("X509Vnc", &p);
    let err = vnc::connect(&server(&lab, None, false), Some("secret1"), T).err().expect("unknown CA");
    let text = err.to_string();
    assert!(matches!(err, VncError::Tls(_)), "{text}");
    assert!(text.contains("its issuer is not trusted") && text.contains("--ca-file"), "{text}");
    let c = vnc::connect(&server(&lab, None, true), Some("secret1"), T).unwrap();
    assert_eq!(c.info.subtype, Some(tls::X509_VNC));
    drop(c);
    // A certificate for another name: refused even with the right CA, the name said as the
    // reason (trial 2 M4: it said the CA file held neither the CA nor the certificate, in
    // rustls' debug text).
    let other = pki(&["vnc.example"]);
    let lab2 = xvnc("X509None", &other);
    let err = vnc::connect(&server(&lab2, Some(&other.ca), false), None, T).err().expect("wrong name");
    let text = err.to_string();
    assert!(
        text.contains("is not valid for the name 127.0.0.1 (it names vnc.example)")
            && text.contains("--vnc-addr NAME:PORT")
            && text.contains("pin it")
            && !text.contains("holds neither")
            && !text.contains("Context {"),
        "{text}"
    );
    // A CA file that holds no certificate: the argument is named.
    let bad = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(bad.path(), "not pem\n").unwrap();
    let err = vnc::connect(&server(&lab, Some(bad.path()), false), Some("secret1"), T).err().unwrap();
    assert!(err.to_string().contains("--ca-file") && err.to_string().contains("no certificate"), "{err}");
}

#[test]
fn x509none_needs_no_password() {
    let p = pki(&["127.0.0.1", "localhost"]);
    let lab = xvnc("X509None", &p);
    let c = vnc::connect(&server(&lab, Some(&p.ca), false), None, T).unwrap();
    assert_eq!(c.info.subtype, Some(tls::X509_NONE));
}

#[test]
fn anonymous_tls_is_refused_with_the_reason_or_passed_over() {
    let p = pki(&["127.0.0.1"]);
    let lab = xvnc("TLSVnc", &p);
    let err = vnc::connect(&server(&lab, None, false), Some("secret1"), T).err().expect("anonymous only");
    let text = err.to_string();
    assert!(matches!(err, VncError::UnsupportedSecurity { .. }), "{text}");
    assert!(text.contains("TLSVnc (258)") && text.contains("anonymous"), "{text}");
    // TLSVnc and plain VNC authentication: charly dials again and uses the latter.
    let lab = xvnc("TLSVnc,VncAuth", &p);
    let c = vnc::connect(&server(&lab, None, false), Some("secret1"), T).unwrap();
    assert_eq!(c.info.security, vnc::rfb::SEC_VNC_AUTH);
    assert_eq!(c.info.subtype, None);
}

/// `openssl req -x509 -newkey rsa:2048 -nodes`: a self-signed certificate that says CA:TRUE,
/// without the address in its names, in `dir` as `<name>.pem` and `<name>.key`.
fn openssl_self_signed(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let (cert, key) = (dir.join(format!("{name}.pem")), dir.join(format!("{name}.key")));
    let out = std::process::Command::new("openssl")
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=charly-vnc-test"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl");
    assert!(out.status.success(), "openssl req -x509: {}", String::from_utf8_lossy(&out.stderr));
    (cert, key)
}

/// A server whose certificate is one `openssl req -x509` made, used as it is (the trial's
/// setup: WebPKI refused it as `CaUsedAsEndEntity`): `--ca-file` with that very certificate
/// trusts it (pinned); `--ca-file` with another self-signed certificate is refused, and the
/// hint says what the file must hold instead of repeating `--ca-file`.
#[test]
fn a_self_signed_server_certificate_is_trusted_when_pinned_by_the_ca_file() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = openssl_self_signed(dir.path(), "server");
    let p = pki(&["127.0.0.1"]);
    let lab = Lab::xtigervnc_with(
        "X509Vnc",
        &["-X509Cert", cert.to_str().unwrap(), "-X509Key", key.to_str().unwrap(), "-PasswordFile", &p.passwd],
    );
    let c = vnc::connect(&server(&lab, Some(&cert), false), Some("secret1"), T).unwrap();
    assert_eq!(c.info.subtype, Some(tls::X509_VNC));
    drop(c);
    // Through the CLI, as the trial ran it.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_charly"))
        .args(["check", "vnc", "status", ".", "--vnc-addr", &lab.addr, "--ca-file"])
        .arg(&cert)
        .env("VNC_PASSWORD", "secret1")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("X509Vnc (261)"), "{stdout}");

    // Another self-signed certificate in the file: refused, saying what the file must hold.
    let (other, _) = openssl_self_signed(dir.path(), "other");
    let err = vnc::connect(&server(&lab, Some(&other), false), Some("secret1"), T).err().expect("not pinned");
    let text = err.to_string();
    assert!(matches!(err, VncError::Tls(_)), "{text}");
    assert!(
        text.contains(&format!(
            "--ca-file {} holds neither the CA that signed it nor the certificate itself",
            other.display()
        )) && !text.contains("Other("),
        "{text}"
    );
}

//! Host-side verbs: `http` (an HTTP client on this machine, against published ports),
//! `dns` (the host's resolver, or the DNS server `server:` names), `addr` and `port` with `reachable:` (a TCP dial), `command`
//! with `from_host: true` (`sh -c` here), and `matching` (no I/O).

use std::time::Duration;

use super::probes::ProbeOutput;
use super::vars::Vars;
use super::verbs::{SystemStep, Verb};

/// How long a TCP dial may take (`addr`, `port` with `reachable:`): 3 s, as the reference.
pub(super) const DIAL_TIMEOUT: Duration = Duration::from_secs(3);

/// `http:`'s timeout when the check has no `timeout:`: 10 s, as the reference.
pub(super) const HTTP_TIMEOUT: Duration = Duration::from_secs(10);

/// The failures of a host-side `step` (empty: it passed). `timeout` bounds the request.
pub(super) async fn run(step: &SystemStep, vars: &Vars, timeout: Duration) -> Vec<String> {
    let subject = &step.subject;
    match step.verb() {
        Verb::Http => http(step, timeout).await,
        Verb::Dns => dns(step).await,
        Verb::Addr => {
            let reachable = dial(subject).await;
            expect_reach(step, &format!("addr {subject}"), reachable)
        }
        Verb::Port => {
            let key = format!("HOST_PORT:{subject}");
            let Some(host_port) = vars.get(&key) else {
                return vec![format!(
                    "port {subject} is not published on the host (add it to the box's port: node or start it with --port {subject}:{subject})"
                )];
            };
            let ip = step.text("ip").unwrap_or("127.0.0.1");
            let address = format!("{ip}:{host_port}");
            let reachable = dial(&address).await;
            expect_reach(step, &format!("port {subject} (published on {address})"), reachable)
        }
        Verb::Matching => {
            step.matchers("contains").iter().filter_map(|m| m.check("value", subject).err()).collect()
        }
        _ => Vec::new(),
    }
}

/// `sh -c <command>` on this machine, whatever its exit status (`command` with
/// `from_host: true` or `in_container: false`).
pub(super) async fn sh(command: &str, timeout: Duration) -> ProbeOutput {
    let mut child = tokio::process::Command::new("sh");
    child.args(["-c", command]).kill_on_drop(true).stdin(std::process::Stdio::null());
    match tokio::time::timeout(timeout, child.output()).await {
        Ok(Ok(out)) => ProbeOutput {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        },
        Ok(Err(e)) => {
            ProbeOutput { status: 127, stdout: String::new(), stderr: format!("cannot run sh: {e}\n") }
        }
        Err(_) => ProbeOutput {
            status: super::ERROR_EXIT_STATUS as i32,
            stdout: String::new(),
            stderr: format!("command timed out after {}\n", charly::client::format_duration(timeout)),
        },
    }
}

fn expect_reach(step: &SystemStep, what: &str, reachable: Result<(), String>) -> Vec<String> {
    match (step.flag("reachable", true), reachable) {
        (true, Ok(())) | (false, Err(_)) => Vec::new(),
        (true, Err(why)) => vec![format!("{what} is not reachable: {why}")],
        (false, Ok(())) => vec![format!("{what} is reachable")],
    }
}

async fn dial(address: &str) -> Result<(), String> {
    match tokio::time::timeout(DIAL_TIMEOUT, tokio::net::TcpStream::connect(address)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no answer within {}", charly::client::format_duration(DIAL_TIMEOUT))),
    }
}

async fn dns(step: &SystemStep) -> Vec<String> {
    let name = &step.subject;
    // `server:` asks that DNS server directly; without it, the host's resolver.
    let found: Result<Vec<String>, String> = match step.text("server") {
        Some(server) => match super::dnsq::server_addr(server) {
            Ok(addr) => super::dnsq::lookup(addr, name).await.and_then(|ips| {
                if ips.is_empty() { Err(format!("server {addr} has no address for it")) } else { Ok(ips) }
            }),
            Err(why) => return vec![format!("dns {name}: {why}")],
        },
        None => tokio::net::lookup_host((name.as_str(), 0))
            .await
            .map(|addrs| addrs.map(|a| a.ip().to_string()).collect())
            .map_err(|e| e.to_string()),
    };
    match (step.flag("resolvable", true), found) {
        (true, Ok(ips)) => step
            .list("addrs")
            .iter()
            .filter(|want| !ips.contains(want))
            .map(|want| format!("dns {name} resolves to {}, not {want}", ips.join(", ")))
            .collect(),
        (true, Err(why)) => vec![format!("dns {name} does not resolve: {why}")],
        (false, Ok(ips)) => vec![format!("dns {name} resolves (to {})", ips.join(", "))],
        (false, Err(_)) => Vec::new(),
    }
}

async fn http(step: &SystemStep, timeout: Duration) -> Vec<String> {
    let url = &step.subject;
    if url.starts_with("https:") {
        // The build has no TLS stack (reqwest without rustls/native-tls).
        return vec![format!(
            "http {url}: https is not supported by this charly build (no TLS); check http:// on the published port"
        )];
    }
    let redirects = if step.flag("no_follow_redirects", false) {
        reqwest::redirect::Policy::none()
    } else {
        reqwest::redirect::Policy::limited(10)
    };
    // reqwest is built with rustls and no provider of its own (charly's client brings ring).
    charly::client::install_tls_provider();
    let client = match reqwest::Client::builder().redirect(redirects).timeout(timeout).build() {
        Ok(c) => c,
        Err(e) => return vec![format!("http {url}: cannot make a client: {e}")],
    };
    let method = step.text("method").unwrap_or("GET").to_ascii_uppercase();
    let Ok(method) = reqwest::Method::from_bytes(method.as_bytes()) else {
        return vec![format!("http {url}: method {method:?} is not an HTTP method")];
    };
    let mut request = client.request(method, url.as_str());
    if let Some(body) = step.text("request_body") {
        request = request.body(body.to_owned());
    }
    let response = match request.send().await {
        Ok(r) => r,
        Err(e) => {
            let why = if e.is_timeout() {
                format!("no answer within {}", charly::client::format_duration(timeout))
            } else {
                error_chain(&e)
            };
            return vec![format!("http {url}: {why}")];
        }
    };
    let status = response.status().as_u16().to_string();
    let headers = response.headers().clone();
    let body = response.text().await.unwrap_or_default();
    let mut fails: Vec<String> = Vec::new();
    let status_matchers = step.matchers("status");
    if status_matchers.is_empty() && !response_ok(&status) {
        fails.push(format!("http {url}: status {status}, expected 2xx or 3xx"));
    }
    fails.extend(status_matchers.iter().filter_map(|m| m.check("status", &status).err()));
    fails.extend(step.matchers("body").iter().filter_map(|m| m.check("body", &body).err()));
    for (name, matchers) in &step.headers {
        let value = headers.get(name.as_str()).and_then(|v| v.to_str().ok());
        match value {
            None => fails.push(format!("http {url}: no header {name}")),
            Some(v) => {
                fails.extend(matchers.iter().filter_map(|m| m.check(&format!("header {name}"), v).err()))
            }
        }
    }
    fails
}

fn response_ok(status: &str) -> bool {
    status.starts_with('2') || status.starts_with('3')
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

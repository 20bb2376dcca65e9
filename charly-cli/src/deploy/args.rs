//! The values of `--env`, `--port`, `--volume` and `--bind`: checked by clap as they are
//! parsed (each function is a `value_parser`, so a bad value is a clap error naming the
//! argument, before anything runs), and turned into [`crate::engine`] types here.

use crate::engine::{Bind, PortMap};

/// The address ports are published on.
pub const BIND_ADDRESS: &str = "127.0.0.1";

/// `KEY=VALUE`: a key of letters, digits and `_` not starting with a digit, then `=`.
///
/// # Errors
///
/// The problem and the fix, for clap to print after the argument's name.
pub fn env_line(text: &str) -> Result<String, String> {
    let Some((key, _)) = text.split_once('=') else {
        return Err("an env line is KEY=VALUE and this one has no `=` (write KEY= for an empty value)".into());
    };
    let valid = !key.is_empty()
        && !key.starts_with(|c: char| c.is_ascii_digit())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!(
            "{key:?} is not a variable name (letters, digits and `_`, not starting with a digit)"
        ));
    }
    Ok(text.to_owned())
}

/// The problems of an env file's `text` for `--env-file`, one per bad line with its number:
/// every line must be blank, a `#` comment or `KEY=VALUE` ([`env_line`]). podman would take a
/// bare `KEY` from the host's environment (and drop it when unset) and refuses nothing, so a
/// line without `=` or with `export` would vanish silently.
pub fn env_file_problems(text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("export ") {
            problems.push(format!(
                "line {}: `{}`: podman reads no `export`; write `{}`",
                i + 1,
                line.trim(),
                rest.trim()
            ));
            continue;
        }
        if let Err(why) = env_line(line) {
            problems.push(format!("line {}: `{}`: {why}", i + 1, line.trim()));
        }
    }
    problems
}

/// `[[IP:]HOST:]CONTAINER[/tcp|/udp]`, ports 1–65535.
///
/// # Errors
///
/// The problem, for clap.
pub fn port_spec(text: &str) -> Result<String, String> {
    parse_port(text).map(|_| text.to_owned())
}

/// A checked port value as a [`PortMap`] (host port = container port when only one is given;
/// address [`BIND_ADDRESS`] unless given).
///
/// # Errors
///
/// The problem, for clap.
pub fn parse_port(text: &str) -> Result<PortMap, String> {
    let (spec, protocol) = match text.rsplit_once('/') {
        Some((spec, p @ ("tcp" | "udp"))) => (spec, p),
        Some((_, p)) => return Err(format!("protocol {p:?} is neither tcp nor udp")),
        None => (text, "tcp"),
    };
    let number = |p: &str| -> Result<u16, String> {
        p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| format!("{p:?} is not a port (1-65535)"))
    };
    let parts: Vec<&str> = spec.rsplitn(3, ':').collect();
    let (ip, host, container) = match parts.as_slice() {
        [c] => (BIND_ADDRESS, number(c)?, number(c)?),
        [c, h] => (BIND_ADDRESS, number(h)?, number(c)?),
        [c, h, ip] => {
            ip.parse::<std::net::IpAddr>().map_err(|_| format!("{ip:?} is not an IP address"))?;
            (*ip, number(h)?, number(c)?)
        }
        _ => return Err("expected [[IP:]HOST:]CONTAINER[/udp], e.g. 8080:80".into()),
    };
    Ok(PortMap { host_ip: ip.to_owned(), host, container, protocol: protocol.to_owned() })
}

/// `NAME:PATH`: a volume name podman accepts, and an absolute container path.
///
/// # Errors
///
/// The problem, for clap.
pub fn volume_spec(text: &str) -> Result<String, String> {
    let Some((name, path)) = text.split_once(':') else {
        return Err("expected NAME:PATH, e.g. data:/var/lib/data".into());
    };
    let valid = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if !valid {
        return Err(format!("volume name {name:?} must match [a-zA-Z0-9][a-zA-Z0-9_.-]*"));
    }
    if !path.starts_with('/') {
        return Err(format!("the container path {path:?} is not absolute"));
    }
    Ok(text.to_owned())
}

/// `HOST_PATH:PATH[:ro]`: a host directory and an absolute container path.
///
/// # Errors
///
/// The problem, for clap.
pub fn bind_spec(text: &str) -> Result<String, String> {
    parse_bind(text).map(|_| text.to_owned())
}

/// A checked bind value as a [`Bind`] whose host path is as given (not yet resolved).
///
/// # Errors
///
/// The problem, for clap.
pub fn parse_bind(text: &str) -> Result<Bind, String> {
    let (rest, read_only) = match text.rsplit_once(':') {
        Some((rest, "ro")) => (rest, true),
        Some((rest, "rw")) => (rest, false),
        _ => (text, false),
    };
    let Some((host, path)) = rest.rsplit_once(':') else {
        return Err("expected HOST_PATH:PATH[:ro], e.g. ./site:/www:ro".into());
    };
    if host.is_empty() {
        return Err("the host path is empty".into());
    }
    if !path.starts_with('/') {
        return Err(format!("the container path {path:?} is not absolute"));
    }
    Ok(Bind { host: host.to_owned(), path: path.to_owned(), read_only })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_lines() {
        assert!(env_line("A=1").is_ok());
        assert!(env_line("A=").is_ok());
        assert!(env_line("A_B=x=y").is_ok());
        assert!(env_line("NOEQUALS").unwrap_err().contains("no `=`"));
        assert!(env_line("=1").is_err());
        assert!(env_line("1A=1").is_err());
    }

    #[test]
    fn ports() {
        let p = parse_port("8080:80").unwrap();
        assert_eq!(
            (p.host_ip.as_str(), p.host, p.container, p.protocol.as_str()),
            ("127.0.0.1", 8080, 80, "tcp")
        );
        let p = parse_port("53/udp").unwrap();
        assert_eq!((p.host, p.container, p.protocol.as_str()), (53, 53, "udp"));
        let p = parse_port("0.0.0.0:1:2").unwrap();
        assert_eq!(p.host_ip, "0.0.0.0");
        assert!(parse_port("x:80").is_err());
        assert!(parse_port("0").is_err());
        assert!(parse_port("80/sctp").is_err());
        assert!(parse_port("1:2:3:4").is_err());
    }

    #[test]
    fn volumes_and_binds() {
        assert!(volume_spec("data:/data").is_ok());
        assert!(volume_spec("data").is_err());
        assert!(volume_spec("-x:/data").is_err());
        assert!(volume_spec("data:rel").is_err());
        assert_eq!(
            parse_bind("./site:/www:ro").unwrap(),
            Bind { host: "./site".into(), path: "/www".into(), read_only: true }
        );
        assert!(!parse_bind("/srv:/srv").unwrap().read_only);
        assert!(parse_bind("/srv").is_err());
        assert!(parse_bind(":/x").is_err());
    }

    #[test]
    fn env_files_are_key_value_lines() {
        let text = "# comment\nGOOD=1\n\nBADLINE\nexport X=2\n1X=3\n";
        assert_eq!(
            super::env_file_problems(text),
            [
                "line 4: `BADLINE`: an env line is KEY=VALUE and this one has no `=` (write KEY= for an empty value)",
                "line 5: `export X=2`: podman reads no `export`; write `X=2`",
                "line 6: `1X=3`: \"1X\" is not a variable name (letters, digits and `_`, not starting with a digit)",
            ]
        );
    }
}

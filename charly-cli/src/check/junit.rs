//! JUnit XML for CI systems (the de-facto schema Jenkins, GitLab and GitHub reporters read).
//!
//! Written by hand rather than with an XML crate: the document is five element types with
//! fixed nesting, and the only subtle part is text escaping, which [`escape`] does (the five
//! XML entities, plus dropping the control characters XML 1.0 cannot carry at all, which an
//! XML writer crate would also leave to us). The tests parse the output with `roxmltree` to
//! prove it well-formed.
//!
//! ```xml
//! <?xml version="1.0" encoding="UTF-8"?>
//! <testsuites name="charly checks" tests="3" failures="1" skipped="1" time="0.412">
//!   <testsuite name="candy/hello/charly.yml" tests="3" failures="1" skipped="1" time="0.412">
//!     <testcase name="hello-ping" classname="mcp.ping" time="0.101"/>
//!     <testcase name="hello-echo" classname="mcp.call" time="0.300">
//!       <failure message="stdout &quot;x&quot; does not equal &quot;y&quot;">...</failure>
//!       <system-out>x</system-out>
//!     </testcase>
//!     <testcase name="hello-box" classname="mcp.ping" time="0.000"><skipped message="..."/></testcase>
//!   </testsuite>
//! </testsuites>
//! ```

use std::io::{self, Write};

use super::run::{CheckResult, Report, Verdict};

/// Writes `report` as JUnit XML: one `<testsuite>` per plan file, in order of appearance.
///
/// # Errors
///
/// Write errors.
pub fn write_junit(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut suites: Vec<(&str, Vec<&CheckResult>)> = Vec::new();
    for r in &report.results {
        match suites.iter_mut().find(|(s, _)| *s == r.source) {
            Some((_, results)) => results.push(r),
            None => suites.push((&r.source, vec![r])),
        }
    }
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuites name="charly checks" tests="{}" failures="{}" skipped="{}" time="{:.3}">"#,
        report.results.len(),
        report.failed,
        report.skipped,
        report.duration.as_secs_f64()
    )?;
    for (source, results) in suites {
        let failures = results.iter().filter(|r| r.verdict == Verdict::Fail).count();
        let skipped = results.iter().filter(|r| r.verdict == Verdict::Skip).count();
        let time: f64 = results.iter().map(|r| r.duration.as_secs_f64()).sum();
        let name = if source.is_empty() { "checks" } else { source };
        writeln!(
            out,
            r#"  <testsuite name="{}" tests="{}" failures="{failures}" skipped="{skipped}" time="{time:.3}">"#,
            escape(name),
            results.len()
        )?;
        for r in results {
            write_case(out, r)?;
        }
        writeln!(out, "  </testsuite>")?;
    }
    writeln!(out, "</testsuites>")?;
    out.flush()
}

fn write_case(out: &mut dyn Write, r: &CheckResult) -> io::Result<()> {
    write!(
        out,
        r#"    <testcase name="{}" classname="{}" time="{:.3}""#,
        escape(&r.name),
        escape(&r.kind),
        r.duration.as_secs_f64()
    )?;
    match r.verdict {
        Verdict::Pass if r.stdout.is_empty() => writeln!(out, "/>"),
        Verdict::Skip => {
            let why = r.reasons.join("; ");
            writeln!(out, ">\n      <skipped message=\"{}\"/>\n    </testcase>", escape(&why))
        }
        verdict => {
            writeln!(out, ">")?;
            if verdict == Verdict::Fail {
                let message = r.reasons.first().map(String::as_str).unwrap_or("failed");
                writeln!(
                    out,
                    "      <failure message=\"{}\" type=\"check\">{}</failure>",
                    escape(message),
                    escape(&format!("{}\n{}", r.description, r.reasons.join("\n")))
                )?;
            }
            if !r.stdout.is_empty() {
                writeln!(out, "      <system-out>{}</system-out>", escape(&r.stdout))?;
            }
            if !r.stderr.is_empty() {
                writeln!(out, "      <system-err>{}</system-err>", escape(&r.stderr))?;
            }
            writeln!(out, "    </testcase>")
        }
    }
}

/// Escapes text for an XML attribute or element: `& < > " '` become entities; characters XML
/// 1.0 forbids (controls other than tab, LF, CR; U+FFFE, U+FFFF) are dropped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(escape(r#"a<b>&"c" 'd'"#), "a&lt;b&gt;&amp;&quot;c&quot; &apos;d&apos;");
        assert_eq!(escape("bell\u{7}\tok\n"), "bell\tok\n");
    }
}

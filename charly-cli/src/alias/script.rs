//! The alias wrapper script: a `/bin/sh` file carrying charly's marker, that runs
//! `charly shell <box> -c "<command> 'arg1' 'arg2' ..."`. Every argument is single-quoted (a
//! `'` inside becomes `'\''`, trailing newlines kept), so no argument can become shell syntax
//! in the container's shell.

/// The marker line of every alias script.
pub const MARKER: &str = "# charly-alias";

/// An alias as its script records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alias {
    /// The script's file name.
    pub name: String,
    /// The box it runs in.
    pub r#box: String,
    /// The command it runs there.
    pub command: String,
    /// The project the box is in (`charly -C DIR`), so the script works from any directory;
    /// `None` in scripts of earlier charly versions, which use the working directory's.
    pub project: Option<String>,
}

/// `text` single-quoted for `sh`.
pub fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The script of `alias`. It exits with the command's own status (`charly shell -c` passes
/// it on).
pub fn render(alias: &Alias) -> String {
    let (project_line, pin) = match &alias.project {
        Some(dir) => (format!("# project: {dir}\n"), format!("-C {} ", sh_quote(dir))),
        None => (String::new(), String::new()),
    };
    format!(
        "#!/bin/sh\n\
         {MARKER}\n\
         # box: {target}\n\
         # command: {command}\n\
         {project_line}\
         # Runs the command in the box's container with this script's arguments, each one quoted.\n\
         cmd={quoted_command}\n\
         for arg in \"$@\"; do\n\
         \x20 quoted=$(printf '%s.' \"$arg\" | sed \"s/'/'\\\\\\\\''/g\")\n\
         \x20 cmd=\"$cmd '${{quoted%.}}'\"\n\
         done\n\
         exec charly {pin}shell {quoted_box} -c \"$cmd\"\n",
        target = alias.r#box,
        command = alias.command,
        quoted_command = sh_quote(&alias.command),
        quoted_box = sh_quote(&alias.r#box),
    )
}

/// The alias a script describes, when it is one [`render`] wrote: `#!/bin/sh`, then the marker
/// on line 2 exactly, `# box: ` on line 3 and `# command: ` on line 4. A marker anywhere else
/// (a user's script that mentions it) does not make a file charly's.
pub fn parse(name: &str, text: &str) -> Option<Alias> {
    let mut lines = text.lines();
    if lines.next()? != "#!/bin/sh" || lines.next()? != MARKER {
        return None;
    }
    let r#box = lines.next()?.strip_prefix("# box: ")?.to_owned();
    let command = lines.next()?.strip_prefix("# command: ")?.to_owned();
    let project = lines.next().and_then(|l| l.strip_prefix("# project: ")).map(str::to_owned);
    Some(Alias { name: name.to_owned(), r#box, command, project })
}

pub use crate::project::{check_alias_command as check_command, check_alias_name as check_name};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_parse() {
        assert!(check_name("rg").is_ok() && check_name("py3.12").is_ok());
        for bad in ["a/b", "", ".x", "-x", "a b", "a;b", "$(x)", "a`b`"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        let alias =
            Alias { name: "rg".into(), r#box: "dev".into(), command: "rg --hidden".into(), project: None };
        assert_eq!(parse("rg", &render(&alias)), Some(alias.clone()));
        let pinned = Alias { project: Some("/srv/it's".into()), ..alias };
        assert!(render(&pinned).contains("exec charly -C '/srv/it'\\''s' shell 'dev' -c \"$cmd\"\n"));
        assert_eq!(parse("rg", &render(&pinned)), Some(pinned));
        assert_eq!(parse("x", "#!/bin/sh\necho hi\n"), None);
        assert_eq!(parse("x", "#!/bin/sh\necho x\n# charly-alias\n"), None);
        assert_eq!(parse("x", "#!/bin/sh\n# charly-alias \n# box: b\n# command: c\n"), None);
        assert_eq!(sh_quote("it's"), "'it'\\''s'");
    }
}

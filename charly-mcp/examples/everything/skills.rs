//! What the conformance suite's skills-extension scenarios (`sep-2640-skills-*`, SEP-2640)
//! read: skills whose folders hold a `SKILL.md`, a reference file in a subfolder (so
//! `resources/directory/read` has a subdirectory to show) and a script, one of them under a
//! two-segment skill path.

use charly_mcp::server::Skill;

pub(super) fn skills() -> Vec<Skill> {
    vec![
        Skill::new("release-notes")
            .file(
                "SKILL.md",
                "---\nname: release-notes\ndescription: Write release notes from a list of merged changes\n\
                 license: MIT\nmetadata:\n  audience: maintainers\n---\n\n\
                 # Release notes\n\n1. Group the changes by area.\n2. Follow references/STYLE.md.\n\
                 3. Run scripts/check.sh on the draft.\n",
            )
            .file(
                "references/STYLE.md",
                "# Style\n\nOne line per change, imperative mood, no trailing period.\n",
            )
            .file(
                "scripts/check.sh",
                "#!/bin/sh\n# Fails on lines longer than 100 characters.\n! grep -n '.\\{101,\\}' \"$1\"\n",
            ),
        Skill::new("acme/pdf-forms")
            .file(
                "SKILL.md",
                "---\nname: pdf-forms\ndescription: Fill PDF forms field by field\n---\n\n\
                 Read references/FIELDS.md for the field types.\n",
            )
            .file("references/FIELDS.md", "text, checkbox, radio, choice, signature\n"),
    ]
}

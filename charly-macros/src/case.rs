//! clap's casing rules (`rename_all`, `rename_all_env`), so derived names agree with clap.

use heck::{ToKebabCase, ToLowerCamelCase, ToShoutySnakeCase, ToSnakeCase, ToUpperCamelCase};

/// A clap `CasingStyle`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Casing {
    Camel,
    Kebab,
    Pascal,
    ScreamingSnake,
    Snake,
    Lower,
    Upper,
    Verbatim,
}

/// The spellings clap accepts, for error messages.
pub(crate) const CASINGS: &str = "camelCase, kebab-case, PascalCase, SCREAMING_SNAKE_CASE, snake_case, \
                                  lowercase, UPPERCASE, verbatim";

impl Casing {
    /// Parses a `rename_all` value the way clap does (`"kebab-case"`, `"kebab"`, ...).
    pub(crate) fn from_str(name: &str) -> Option<Self> {
        Some(match name.to_upper_camel_case().to_lowercase().as_str() {
            "camel" | "camelcase" => Casing::Camel,
            "kebab" | "kebabcase" => Casing::Kebab,
            "pascal" | "pascalcase" => Casing::Pascal,
            "screamingsnake" | "screamingsnakecase" => Casing::ScreamingSnake,
            "snake" | "snakecase" => Casing::Snake,
            "lower" | "lowercase" => Casing::Lower,
            "upper" | "uppercase" => Casing::Upper,
            "verbatim" | "verbatimcase" => Casing::Verbatim,
            _ => return None,
        })
    }

    /// `ident` (already unraw'd) in this casing.
    pub(crate) fn apply(self, ident: &str) -> String {
        match self {
            Casing::Pascal => ident.to_upper_camel_case(),
            Casing::Kebab => ident.to_kebab_case(),
            Casing::Camel => ident.to_lower_camel_case(),
            Casing::ScreamingSnake => ident.to_shouty_snake_case(),
            Casing::Snake => ident.to_snake_case(),
            Casing::Lower => ident.to_snake_case().replace('_', ""),
            Casing::Upper => ident.to_shouty_snake_case().replace('_', ""),
            Casing::Verbatim => ident.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Casing::{self, *};

    #[test]
    fn casings_match_clap() {
        let cases = [
            (Kebab, "dry_run", "dry-run"),
            (Kebab, "AddRpm", "add-rpm"),
            (Snake, "AddRpm", "add_rpm"),
            (ScreamingSnake, "dry_run", "DRY_RUN"),
            (Camel, "dry_run", "dryRun"),
            (Pascal, "dry_run", "DryRun"),
            (Lower, "AddRpm", "addrpm"),
            (Upper, "add_rpm", "ADDRPM"),
            (Verbatim, "Add_Rpm", "Add_Rpm"),
        ];
        for (casing, input, output) in cases {
            assert_eq!(casing.apply(input), output, "{casing:?} {input}");
        }
        for (text, casing) in
            [("kebab-case", Kebab), ("kebab", Kebab), ("SCREAMING_SNAKE_CASE", ScreamingSnake)]
        {
            assert_eq!(Casing::from_str(text), Some(casing));
        }
        assert_eq!(Casing::from_str("shouting"), None);
    }
}

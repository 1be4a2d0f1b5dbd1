//! The APIs' answers are their own types, built from the store's rows, so that a column renamed
//! in a migration changes a row and never what a client reads. [`answer!`](crate::answer) writes
//! an answer type and its `From` the row from one field list.

/// An answer type `$out`, documented in the OpenAPI document as `$schema` (the name clients
/// know), and its `From<$row>` (the row, or the store's result, it shows): each field is the
/// row's field of that name, converted by `Into` (a nested row into its answer; anything else
/// as it is), or by the function given after `=` (such as [`each`]). A field's doc comment is
/// what the document says of it; its `#[serde]` and `#[schema]` attributes are kept. The caller
/// depends on `serde` and `utoipa`.
#[macro_export]
macro_rules! answer {
    ($(#[$doc:meta])* $out:ident as $schema:ident from $row:ty {
        $($(#[$attr:meta])* $field:ident: $ty:ty $(= $convert:expr)?,)*
    }) => {
        $(#[$doc])*
        #[derive(serde::Serialize, utoipa::ToSchema)]
        #[schema(as = $schema)]
        pub struct $out {
            $($(#[$attr])* pub $field: $ty,)*
        }

        impl From<$row> for $out {
            fn from(r: $row) -> Self {
                $out { $($field: $crate::answer!(@convert r.$field $(, $convert)?),)* }
            }
        }
    };
    (@convert $value:expr) => {
        ::core::convert::Into::into($value)
    };
    (@convert $value:expr, $convert:expr) => {
        ($convert)($value)
    };
}

/// Each of a row's list turned into its answer (a field's conversion in [`answer!`]).
pub fn each<R, A: From<R>>(rows: Vec<R>) -> Vec<A> {
    rows.into_iter().map(A::from).collect()
}

//! The APIs' answers are their own types, built from the store's rows, so that a column renamed
//! in a migration changes a row and never what a client reads. [`answer!`](crate::answer) writes
//! an answer type and its `From` the row from one field list.

/// An answer type `$out`, documented in the OpenAPI document as `$schema` (the name clients
/// know), and its `From<$row>`: each field is the row's field of that name, converted with
/// `Into` (a nested row into its answer; anything else as it is). A field's doc comment is what
/// the document says of it; its `#[serde]` and `#[schema]` attributes are kept.
#[macro_export]
macro_rules! answer {
    ($(#[$doc:meta])* $out:ident as $schema:ident from $row:ty {
        $($(#[$field_attr:meta])* $field:ident: $ty:ty,)*
    }) => {
        $(#[$doc])*
        #[derive(serde::Serialize, utoipa::ToSchema)]
        #[schema(as = $schema)]
        pub struct $out {
            $($(#[$field_attr])* pub $field: $ty,)*
        }

        impl From<$row> for $out {
            fn from(r: $row) -> Self {
                $out { $($field: r.$field.into(),)* }
            }
        }
    };
}

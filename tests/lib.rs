pub mod uetds_fake;

pub mod {{ r.version }};

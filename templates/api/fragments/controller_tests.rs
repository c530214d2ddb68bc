mod {{ r.test_module }};

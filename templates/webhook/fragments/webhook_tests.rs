mod {{ w.test_module }};

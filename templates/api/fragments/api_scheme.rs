    scheme.add::<{{ r.kind }}>();

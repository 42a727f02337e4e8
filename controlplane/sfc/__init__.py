"""SFC requests: VNF templates, the μNF graph they expand to, its composition into a spec, drawings, JSON Schema."""

"""From kernel IR to text: the pass list (:mod:`.ascendc`), the render models (:mod:`.emit`), the one Jinja environment
(:mod:`.jinja`) and element types as template parameters (:mod:`.templated`)."""

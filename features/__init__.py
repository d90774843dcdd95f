"""The Gherkin suite: feature files by area, their binders and step definitions, and behaviors.yaml
(package data of the kit)."""

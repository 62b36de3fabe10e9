package fakecentral

// The catalog is generated from the vendor's OpenAPI definitions, which live
// beside the repository in ../shared/reference (they are not vendored here).
//go:generate go run ./internal/catalog/gen -in ../../shared/reference/central-openapi -out catalog.json

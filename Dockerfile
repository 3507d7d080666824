# syntax=docker/dockerfile:1
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# What --version reports (make image passes them): the context has no .git for Go to read.
ARG VERSION=
ARG COMMIT=
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X github.com/memgraph-hooks/memgraph-hooks/internal/version.module=${VERSION} -X github.com/memgraph-hooks/memgraph-hooks/internal/version.commit=${COMMIT}" -o /out/memgraph-hooks ./cmd/memgraph-hooks

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/memgraph-hooks /memgraph-hooks
USER 65532:65532
EXPOSE 8080 9090
ENTRYPOINT ["/memgraph-hooks"]

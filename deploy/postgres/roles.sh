#!/usr/bin/env bash
# The service database's roles (docs/decisions/0265-database-roles-owner-and-service.md), run by the
# postgres image once, at the database's first start (/docker-entrypoint-initdb.d): the image's own
# user (POSTGRES_USER, `tranche`) owns the database and runs the migrations (the `migrate` service);
# the services connect as `tranche_app`, a member of `tranche_service`, which migration 0063 grants
# row rights to. A volume made before this file existed: run the two statements below by hand once.
set -euo pipefail
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v app_password="$TRANCHE_APP_DB_PASSWORD" <<'SQL'
create role tranche_service nologin;
create role tranche_app login password :'app_password' in role tranche_service;
SQL

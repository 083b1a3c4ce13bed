#!/usr/bin/env bash
# Start a LiteLLM proxy with PostgreSQL (its spend logs are the ledger) for one leg of the reusable
# workflow (input litellm-config): both on the runner's host network, LiteLLM on 127.0.0.1:4000.
# Reads LITELLM_CONFIG (a file of the calling repository), LITELLM_IMAGE, LITELLM_MASTER_KEY and
# PROVIDER_API_KEY / PROVIDER_BASE_URL (for the config's os.environ/… references). Waits up to three
# minutes for /health/liveliness; on failure prints LiteLLM's last log lines and exits 1.
set -euo pipefail
if [ ! -f "$LITELLM_CONFIG" ]; then
  echo "::error::litellm-config: no file $LITELLM_CONFIG in the calling repository"
  exit 1
fi
if [ -z "${LITELLM_MASTER_KEY:-}" ]; then
  echo "::error::litellm-config is set but the secret litellm-master-key is empty: pass it under secrets: of the calling job"
  exit 1
fi
pg_password=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
docker run -d --name hw-litellm-db --network host \
  -e POSTGRES_USER=litellm -e POSTGRES_PASSWORD="$pg_password" -e POSTGRES_DB=litellm \
  postgres:16 >/dev/null
for _ in $(seq 60); do
  docker exec hw-litellm-db pg_isready -U litellm >/dev/null 2>&1 && break
  sleep 2
done
docker run -d --name hw-litellm --network host \
  -v "$PWD/$LITELLM_CONFIG:/app/config.yaml:ro" \
  -e DATABASE_URL="postgresql://litellm:$pg_password@127.0.0.1:5432/litellm" \
  -e LITELLM_MASTER_KEY -e PROVIDER_API_KEY -e PROVIDER_BASE_URL \
  "$LITELLM_IMAGE" --config /app/config.yaml --port 4000 >/dev/null
for _ in $(seq 90); do
  if curl -fsS http://127.0.0.1:4000/health/liveliness >/dev/null 2>&1; then
    echo "LiteLLM is up on http://127.0.0.1:4000 ($LITELLM_IMAGE)"
    exit 0
  fi
  sleep 2
done
echo "::error::LiteLLM did not answer on http://127.0.0.1:4000 within 3 minutes"
docker logs hw-litellm 2>&1 | tail -50
exit 1

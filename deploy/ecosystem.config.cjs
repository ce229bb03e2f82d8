// pm2 ecosystem for bwnet (pm2 start deploy/ecosystem.config.cjs [--only bwnet-worker]).
// One app per role on this host; keep the ones this host runs. Settings as BWN_* variables
// (docs/node.md#settings); pm2 captures stdout, where the node writes JSON log lines.
const common = {
  script: 'bwnet',
  interpreter: 'none', // the installed `bwnet` bin (npm install -g bwnet-<version>.tgz)
  autorestart: true,
  restart_delay: 5000,
  kill_timeout: 15000, // SIGTERM first: a node stops within 5 s
  max_restarts: 20,
  time: true
}
const network = {
  BWN_BOOTSTRAP: '10.0.0.1:49737',
  BWN_NETWORK: 'mainnet-1',
  LOG_FORMAT: 'json',
  LOG_LEVEL: 'info'
}

module.exports = {
  apps: [
    {
      ...common,
      name: 'bwnet-bootstrap',
      args: 'bootstrap --host 10.0.0.1 --port 49737',
      env: { LOG_FORMAT: 'json' }
    },
    {
      ...common,
      name: 'bwnet-orchestrator',
      args: 'node',
      env: {
        ...network,
        BWN_ROLE: 'orchestrator',
        BWN_DATA: '/var/lib/bwnet/orchestrator',
        BWN_DHT_HOST: '10.0.0.2',
        BWN_DHT_PORT: '49738',
        BWN_HOST: '10.0.0.2',
        BWN_PORT: '8000',
        BWN_PUBLIC_URL: 'http://10.0.0.2:8000',
        BWN_METRICS_HOST: '10.0.0.2',
        BWN_METRICS_PORT: '9464'
      }
    },
    {
      ...common,
      name: 'bwnet-worker',
      args: 'node',
      env: {
        ...network,
        BWN_ROLE: 'worker',
        BWN_DATA: '/var/lib/bwnet/worker',
        BWN_DHT_HOST: '10.0.0.11',
        BWN_DHT_PORT: '49738',
        BWN_SLOTS: '4',
        BWN_METRICS_HOST: '10.0.0.11',
        BWN_METRICS_PORT: '9464'
      }
    },
    {
      ...common,
      name: 'bwnet-validator',
      args: 'node',
      env: {
        ...network,
        BWN_ROLE: 'validator',
        BWN_DATA: '/var/lib/bwnet/validator',
        BWN_DHT_HOST: '10.0.0.3',
        BWN_DHT_PORT: '49738',
        BWN_CHAIN_HOST: '5F...', // the orchestrator's address
        BWN_METRICS_HOST: '10.0.0.3',
        BWN_METRICS_PORT: '9464'
      }
    }
  ]
}

#!/usr/bin/env bash
# Fetches the READMEs of about 220 popular npm packages into a folder, one
# subfolder per package: a second corpus nobody here wrote for
# BenchmarkRecall, closer to documentation people search than the module
# cache's Markdown. Needs npm and the npm registry.
#
#   scripts/npm-readmes.sh /tmp/npm-readmes
#   OMNIDEV_RECALL_CORPUS=/tmp/npm-readmes go test ./internal/query/ -run '^$' -bench Recall -benchtime 1x
set -euo pipefail
dest=${1:?usage: scripts/npm-readmes.sh <folder>}
packages=(
  express koa fastify @hapi/hapi body-parser cors helmet morgan compression cookie-parser
  express-session multer busboy formidable serve-static http-proxy-middleware
  axios got node-fetch superagent undici ky ws socket.io socket.io-client
  lodash underscore ramda immer immutable rxjs date-fns dayjs moment luxon uuid nanoid
  chalk commander yargs minimist inquirer ora boxen cli-progress meow prompts enquirer listr2
  kleur picocolors dotenv dotenv-expand cross-env env-cmd config convict
  winston pino bunyan debug loglevel signale
  glob fast-glob globby rimraf mkdirp fs-extra chokidar graceful-fs del tmp
  semver execa shelljs cross-spawn concurrently npm-run-all nodemon pm2
  jest mocha chai sinon supertest nock vitest ava tap jasmine c8 nyc
  eslint prettier stylelint husky lint-staged standard xo
  webpack rollup esbuild vite parcel @babel/core postcss autoprefixer sass less terser
  react react-dom vue svelte preact lit solid-js @angular/core
  redux @reduxjs/toolkit mobx zustand jotai recoil react-router react-query swr
  styled-components @emotion/react classnames clsx tailwindcss
  mongoose sequelize typeorm knex pg mysql2 sqlite3 better-sqlite3 redis ioredis mongodb
  prisma drizzle-orm jsonwebtoken bcrypt bcryptjs passport passport-jwt csurf
  express-rate-limit zod joi yup ajv validator class-validator superstruct
  marked markdown-it remark unified highlight.js prismjs handlebars ejs pug nunjucks mustache
  cheerio jsdom puppeteer playwright yaml js-yaml toml ini xml2js fast-xml-parser csv-parse
  papaparse sharp jimp qrcode pdfkit lru-cache node-cache keyv quick-lru p-limit p-queue
  p-retry async bluebird eventemitter3 mitt graphql @apollo/server graphql-tools
  qs query-string mime mime-types iconv-lite d3 three chart.js leaflet
  typescript ts-node tsx nodemailer bull bullmq agenda node-cron cron i18next
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$dest"
printf '%s\n' "${packages[@]}" |
  xargs -P 4 -I{} sh -c 'npm pack "$1" --pack-destination "$2" >/dev/null 2>&1 || echo "npm pack $1 failed" >&2' _ {} "$tmp"
for tgz in "$tmp"/*.tgz; do
  pkg=$(basename "$tgz" .tgz)
  mkdir -p "$dest/$pkg"
  tar -xzf "$tgz" -C "$dest/$pkg" --wildcards --no-anchored 'README.md' 'readme.md' 'Readme.md' 2>/dev/null || true
done
echo "$(find "$dest" -iname 'readme*.md' | wc -l) READMEs in $dest"

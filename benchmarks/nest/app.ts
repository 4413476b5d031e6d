/**
 * The peer endpoints as a NestJS 12 application on `@nestjs/platform-fastify`, written
 * as Nest's documentation writes them: a controller, a DTO checked by class-validator
 * through a global `ValidationPipe`, `ParseIntPipe` on the id. Nest brings its own
 * Fastify instance, so it listens on a port of its own in the benchmark process.
 * Compiled with legacy decorators (its own tsconfig.json).
 */
import 'reflect-metadata'
import type { AddressInfo } from 'node:net'
import { Body, Controller, Get, Inject, Module, NotFoundException, Param, ParseIntPipe, Post, ValidationPipe } from '@nestjs/common'
import { NestFactory } from '@nestjs/core'
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify'
import { IsArray, IsNumber, IsString, Min, MinLength } from 'class-validator'
import type { PeerItem, PeerStore } from '../scenarios/peer-store.js'

const STORE = Symbol('store')

class CreateItemDto {
  @IsString() @MinLength(1) name!: string
  @IsNumber() @Min(0) price!: number
  @IsArray() @IsString({ each: true }) tags!: string[]
}

@Controller('peers/nest/items')
class ItemsController {
  constructor (@Inject(STORE) private readonly store: PeerStore) {}

  @Get()
  async list (): Promise<PeerItem[]> {
    return await this.store.list()
  }

  @Get(':id')
  async retrieve (@Param('id', ParseIntPipe) id: number): Promise<PeerItem> {
    const item = await this.store.get(id)
    if (item === null) throw new NotFoundException()
    return item
  }

  @Post()
  async create (@Body() body: CreateItemDto): Promise<PeerItem> {
    return await this.store.create(body)
  }
}

/** Starts the Nest application on 127.0.0.1 and an ephemeral port; returns the port. */
export async function startNest (store: PeerStore): Promise<number> {
  @Module({ controllers: [ItemsController], providers: [{ provide: STORE, useValue: store }] })
  class AppModule {}
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), { logger: false })
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }))
  await app.listen(0, '127.0.0.1')
  return (app.getHttpServer().address() as AddressInfo).port
}
